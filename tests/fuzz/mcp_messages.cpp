// A line from an MCP client is untrusted input: whatever it holds, parsing it gives a
// message or the JSON-RPC error to answer with (never a throw), the error line written
// for it is one line of valid JSON, and the era and argument checks that follow either
// accept it or refuse it with corral's invalid-argument, never anything else.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "corral/errors.hpp"
#include "corral/json.hpp"
#include "mcp/args.hpp"
#include "corral/sdk/base64.hpp"
#include "mcp/json_rpc.hpp"
#include "mcp/protocol.hpp"

namespace {

void check_line(const std::string& line) {
  if (line.find('\n') != std::string::npos) std::abort();
  try {
    (void)corral::json::parse(line, "a line the server wrote");
  } catch (const corral::Error&) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  corral::mcp::Parsed parsed = corral::mcp::parse_line(text);
  if (parsed.error) check_line(corral::mcp::error_line(parsed.error_id, *parsed.error));
  if (!parsed.message) return 0;
  const corral::mcp::Message& m = *parsed.message;
  for (bool initialized : {false, true}) {
    const corral::mcp::EraOrError era = corral::mcp::era_of(m.method, m.params, initialized);
    if (era.era.has_value() == era.error.has_value()) std::abort();
    if (era.error) check_line(corral::mcp::error_line(m.id.empty() ? "null" : m.id, *era.error));
  }
  const corral::json::Value* arguments = m.params ? corral::json::find(*m.params, "arguments") : nullptr;
  try {
    const corral::mcp::Args args(arguments, {"command", "lease", "path", "count", "keep"});
    (void)args.strings("command");
    (void)args.optional_string("lease");
    (void)args.integer("count", 1, 1, 16);
    (void)args.boolean("keep", false);
    if (std::optional<std::string> path = args.optional_string("path")) {
      std::optional<std::string> bytes = corral::sdk::base64_decode(*path);
      if (bytes && corral::sdk::base64_decode(corral::sdk::base64_encode(*bytes)) != bytes) std::abort();
    }
  } catch (const corral::Error& e) {
    if (e.code() != corral::ErrorCode::invalid_argument) std::abort();
  }
  return 0;
}
