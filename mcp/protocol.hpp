// The two eras of MCP this server speaks, and how a message says which it is in:
//   2025-11-25 (and the legacy revisions before it): an `initialize` handshake fixes the
//     version for the connection; results are plain.
//   2026-07-28: stateless; every request carries its version and the client's
//     capabilities in `_meta`, `server/discover` says what the server speaks, and every
//     result says its resultType and the server's identity.
//
// Threads: constants and free functions; safe from any thread.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "corral/json.hpp"
#include "json_rpc.hpp"

namespace corral::mcp {

inline constexpr std::string_view kModernVersion = "2026-07-28";
// The handshake revisions `initialize` accepts, newest first: the answer to an unknown
// one is the newest (the client then decides whether it can go on).
inline constexpr std::array<std::string_view, 4> kLegacyVersions = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                                    "2024-11-05"};
inline constexpr const char* kVersionKey = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kServerInfoKey = "io.modelcontextprotocol/serverInfo";

// How one request is to be answered.
struct Era {
  bool modern = false;  // 2026-07-28: results carry resultType and the server's identity
};

// The era of a request whose params are `params` (null when absent), given whether this
// connection already had an `initialize`. A request with the modern `_meta` is modern;
// its version must be one this server speaks and it must declare its capabilities, else
// the error to answer with. Without it, `initialize` and `ping` are always legacy; any
// other request is legacy only after an `initialize`.
struct EraOrError {
  std::optional<Era> era;
  std::optional<RpcError> error;
};
EraOrError era_of(std::string_view method, const json::Value* params, bool initialized);

// The version `initialize` answers for a client that asked for `requested`.
std::string_view negotiate_legacy(std::string_view requested);

// `result_fields` (the members of a result object, as JSON text without braces, may be
// empty) as the result `era` answers with: modern ones with resultType and serverInfo.
std::string result_object(const Era& era, const std::string& result_fields, std::string_view server_version);

}  // namespace corral::mcp
