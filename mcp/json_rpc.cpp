#include "json_rpc.hpp"

#include <fmt/format.h>

#include "corral/errors.hpp"

namespace corral::mcp {
namespace {

Parsed failure(RpcCode code, std::string message, std::string id = "null") {
  Parsed p;
  p.error = RpcError{code, std::move(message), ""};
  p.error_id = std::move(id);
  return p;
}

}  // namespace

Parsed parse_line(std::string_view line) {
  json::Document doc;
  try {
    doc = json::parse(line, "the JSON-RPC message");
  } catch (const Error& e) {
    return failure(RpcCode::parse_error, e.what());
  }
  if (!doc.IsObject()) return failure(RpcCode::invalid_request, "a JSON-RPC message is an object (batches are not part of MCP)");
  // The id first, so every later error answers the request it belongs to.
  // Found directly, not with json::find, which reads a null member as absent: MCP's ids
  // must not be null, and a request with one is answered, not taken for a notification.
  std::string id;
  if (auto it = doc.FindMember("id"); it != doc.MemberEnd()) {
    const json::Value& v = it->value;
    if (!v.IsString() && !v.IsInt64())
      return failure(RpcCode::invalid_request, "the id must be a string or an integer (MCP's ids are never null)");
    id = json::dump(v);
  }
  const json::Value* version = json::find(doc, "jsonrpc");
  if (!version || !version->IsString() || std::string_view(version->GetString()) != "2.0")
    return failure(RpcCode::invalid_request, "\"jsonrpc\" must be \"2.0\"", id.empty() ? "null" : id);
  const json::Value* method = json::find(doc, "method");
  if (!method) {
    if (json::find(doc, "result") || json::find(doc, "error")) return {};  // a response: nothing to do
    return failure(RpcCode::invalid_request, "a request needs a \"method\"", id.empty() ? "null" : id);
  }
  if (!method->IsString()) return failure(RpcCode::invalid_request, "\"method\" must be a string", id.empty() ? "null" : id);
  Parsed p;
  Message& m = p.message.emplace();
  m.method.assign(method->GetString(), method->GetStringLength());
  m.id = std::move(id);
  m.doc = std::move(doc);
  if (const json::Value* params = json::find(m.doc, "params")) {
    if (!params->IsObject()) {
      Parsed bad = failure(RpcCode::invalid_params, "\"params\" must be an object", m.id.empty() ? "null" : m.id);
      if (m.id.empty()) bad.error.reset();  // a notification gets no answer, not even an error
      return bad;
    }
    m.params = params;
  }
  return p;
}

std::string result_line(const std::string& id, const std::string& result_json) {
  return fmt::format(R"({{"jsonrpc":"2.0","id":{},"result":{}}})", id, result_json);
}

std::string error_line(const std::string& id, const RpcError& error) {
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "jsonrpc", "2.0");
    // MCP's schema has no null id: an error about a message whose id could not be read
    // leaves it out (JSON-RPC 2.0 would write null).
    if (!id.empty() && id != "null") {
      w.Key("id");
      w.RawValue(id.data(), id.size(), rapidjson::kNumberType);
    }
    w.Key("error");
    w.StartObject();
    w.Key("code");
    w.Int(static_cast<int>(error.code));
    json::write_string(w, "message", error.message);
    if (!error.data.empty()) {
      w.Key("data");
      w.RawValue(error.data.data(), error.data.size(), rapidjson::kObjectType);
    }
    w.EndObject();
    w.EndObject();
  });
}

std::string notification_line(std::string_view method, const std::string& params_json) {
  return fmt::format(R"({{"jsonrpc":"2.0","method":{},"params":{}}})",
                     json::text_of([&](json::Writer& w) { json::write_text(w, method); }), params_json);
}

}  // namespace corral::mcp
