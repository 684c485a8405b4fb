// JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line. Parsing is
// bounded (nesting, size) and never throws for what a client sends; what it cannot accept
// becomes the error the specification names, with the request's id when it has one.
//
// Threads: free functions on values; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "corral/json.hpp"

namespace corral::mcp {

// The error codes JSON-RPC and MCP define.
enum class RpcCode : int {
  parse_error = -32700,
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602,
  internal_error = -32603,
  unsupported_version = -32022,  // MCP 2026-07-28: data {supported, requested}
};

// A protocol error for one message: its code, message and optional data (JSON text).
struct RpcError {
  RpcCode code;
  std::string message;
  std::string data;  // JSON text; "" = none
};

// One line, parsed. `id` is the request's id as JSON text ("7", "\"a\""), "" for a
// notification; `params` is null when absent.
struct Message {
  json::Document doc;
  std::string id;
  std::string method;
  const json::Value* params = nullptr;
  bool is_request() const { return !id.empty(); }
};

// What one line turned out to be: a message, a response from the client (ignored: this
// server sends no requests), or an error to answer with (`error_id` the id to answer to,
// "null" when the line had none that could be read).
struct Parsed {
  std::optional<Message> message;
  std::optional<RpcError> error;
  std::string error_id = "null";
};

// Parses one line of the transport.
Parsed parse_line(std::string_view line);

// The lines this server writes, each without its newline. An error line for the id
// "null" (or "") has no id member: MCP's ids are never null.
std::string result_line(const std::string& id, const std::string& result_json);
std::string error_line(const std::string& id, const RpcError& error);
std::string notification_line(std::string_view method, const std::string& params_json);

}  // namespace corral::mcp
