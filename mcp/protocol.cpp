#include "protocol.hpp"

#include <fmt/format.h>

namespace corral::mcp {

EraOrError era_of(std::string_view method, const json::Value* params, bool initialized) {
  const json::Value* meta = params ? json::find(*params, "_meta") : nullptr;
  const json::Value* version = meta ? json::find(*meta, kVersionKey) : nullptr;
  if (version) {
    if (!version->IsString() || std::string_view(version->GetString()) != kModernVersion) {
      const std::string requested = version->IsString() ? version->GetString() : json::dump(*version);
      std::string data = json::text_of([&](json::Writer& w) {
        w.StartObject();
        w.Key("supported");
        w.StartArray();
        json::write_text(w, kModernVersion);
        for (std::string_view v : kLegacyVersions) json::write_text(w, v);
        w.EndArray();
        json::write_string(w, "requested", requested);
        w.EndObject();
      });
      return {std::nullopt, RpcError{RpcCode::unsupported_version,
                                     fmt::format("protocol version '{}' is not supported", requested),
                                     std::move(data)}};
    }
    const json::Value* caps = json::find(*meta, kCapabilitiesKey);
    if (!caps || !caps->IsObject())
      return {std::nullopt,
              RpcError{RpcCode::invalid_params, fmt::format("_meta[\"{}\"] is required (an object)", kCapabilitiesKey), ""}};
    return {Era{.modern = true}, std::nullopt};
  }
  if (method == "initialize" || method == "ping" || initialized) return {Era{}, std::nullopt};
  return {std::nullopt,
          RpcError{RpcCode::invalid_request,
                   fmt::format("'{}' before the connection was set up: send `initialize` first (protocol 2025-11-25), "
                               "or give every request _meta[\"{}\"] = \"{}\"",
                               method, kVersionKey, kModernVersion),
                   ""}};
}

std::string_view negotiate_legacy(std::string_view requested) {
  for (std::string_view v : kLegacyVersions)
    if (v == requested) return v;
  return kLegacyVersions.front();
}

std::string result_object(const Era& era, const std::string& result_fields, std::string_view server_version) {
  if (!era.modern) return "{" + result_fields + "}";
  const std::string meta = fmt::format(R"("resultType":"complete","_meta":{{"{}":{{"name":"corral","version":{}}}}})",
                                       kServerInfoKey,
                                       json::text_of([&](json::Writer& w) { json::write_text(w, server_version); }));
  return "{" + result_fields + (result_fields.empty() ? "" : ",") + meta + "}";
}

}  // namespace corral::mcp
