#include "control_plane.hpp"

#include "corral/sdk/read_answer.hpp"
#include "corral/sdk/remote/errors.hpp"
#include "corral/sdk/remote/paged_list.hpp"
#include "errors.hpp"
#include "spec.hpp"

namespace corral::e2b {
namespace {

namespace http = sdk::http;

// The fields of one sandbox object; throws for a field of the wrong type.
SandboxInfo fields_of(const json::Value& v) {
  SandboxInfo s;
  s.id = json::get_string(v, "sandboxID");
  s.template_id = json::get_string(v, "templateID");
  s.alias = json::get_string(v, "alias");
  s.state = json::get_string(v, "state");
  s.started_at = json::get_string(v, "startedAt");
  s.end_at = json::get_string(v, "endAt");
  s.envd_version = json::get_string(v, "envdVersion");
  s.domain = json::get_string(v, "domain");
  s.envd_access_token = json::get_string(v, "envdAccessToken");
  s.metadata = json::get_map(v, "metadata");
  return s;
}

// Reads one sandbox object; anything off is the provider's fault, not the user's.
SandboxInfo info_from(const json::Value& v, const std::string& what) {
  return http::read_object(v, what, "a sandbox", fields_of);
}

SandboxInfo info_of(const http::Response& response, const std::string& what) {
  json::Document doc = http::parse_body(response, what);
  SandboxInfo s = info_from(doc, what);
  if (s.id.empty()) throw http::unexpected_answer(what, "the answer has no sandboxID");
  return s;
}

std::string timeout_body(std::int64_t seconds) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("timeout");
  w.Int64(seconds);
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

// The NewSandbox fields of `network` (openapi.yml): none is allow_internet_access false
// ("the same as denyOut 0.0.0.0/0"); allow: denies all and lists the exceptions in
// allowOut, which takes domains ("*.example.com" too), IPs and CIDRs, and whose entries
// "always take precedence over denied entries". Open sends neither: E2B's default.
void write_network(json::Writer& w, const NetworkPolicy& network) {
  if (network.mode == NetworkPolicy::Mode::none) {
    w.Key("allow_internet_access");
    w.Bool(false);
  } else if (network.mode == NetworkPolicy::Mode::allow) {
    w.Key("network");
    w.StartObject();
    json::write_strings(w, "allowOut", network.allow);
    json::write_strings(w, "denyOut", {"0.0.0.0/0"});
    w.EndObject();
  }
}

}  // namespace

http::Response ControlPlane::call(const std::string& method, const std::string& path, const std::string& body,
                                  http::Retry retry, const std::string& what, const Timeout& timeout,
                                  const sdk::Host* cancellable) {
  if (settings_.api_key.empty()) throw sdk::remote::missing_api_key(identity());
  http::Request r;
  r.method = method;
  r.url = settings_.api_url + path;
  r.headers.emplace_back("X-API-Key", settings_.api_key);
  r.body = body;
  r.timeout_seconds = static_cast<long>(timeout.seconds);
  r.timeout_setting = timeout.setting;
  r.what = what;
  if (cancellable) r.cancelled = [cancellable] { return cancellable->cancelled(); };
  return http::send_retrying(client_, std::move(r), retry);
}

http::Response ControlPlane::with_lifetime_cap(std::int64_t seconds, const std::string& setting, const sdk::Host& host,
                                               const std::function<http::Response(std::int64_t)>& attempt) {
  http::Response response = attempt(seconds);
  auto cap = lifetime_cap_seconds(response);
  if (!cap) return response;
  host.warn("E2B refused a sandbox lifetime of " + format_duration(seconds) + " (\"" +
            http::error_message(response.body) + "\"); using your account's cap of " + format_duration(*cap) +
            " instead. Set " + setting + " to ask for a specific lifetime.");
  return attempt(*cap);
}

SandboxInfo ControlPlane::create(const StringMap& metadata, const NetworkPolicy& network, const sdk::Host& host) {
  const std::string what = "E2B create sandbox";
  const std::string lifetime = setting_name("lifetime");
  http::Response response = with_lifetime_cap(settings_.lifetime_seconds, lifetime, host, [&](std::int64_t seconds) {
    rapidjson::StringBuffer buffer;
    json::Writer w(buffer);
    w.StartObject();
    json::write_string(w, "templateID", settings_.template_id);
    w.Key("timeout");
    w.Int64(seconds);
    // secure: envd demands the per-sandbox access token, as E2B's own SDKs ask for.
    w.Key("secure");
    w.Bool(true);
    w.Key("autoPause");
    w.Bool(false);
    json::write_map(w, "metadata", metadata);
    write_network(w, network);
    w.EndObject();
    return call("POST", "/sandboxes", buffer.GetString(), http::Retry::never, what, create_timeout(), nullptr);
  });
  if (response.status == 404) throw template_not_found(settings_.template_id, response);
  if (!response.ok()) throw api_error(response, what);
  return info_of(response, what);
}

SandboxInfo ControlPlane::get(const std::string& id, const sdk::Host& host) {
  const std::string what = "E2B get sandbox " + id;
  http::Response response =
      call("GET", "/sandboxes/" + http::url_encode(id), "", http::Retry::idempotent, what, request_timeout(), &host);
  sdk::remote::expect_sandbox(identity(), response, what, id);
  return info_of(response, what);
}

SandboxInfo ControlPlane::connect(const std::string& id, const sdk::Host& host) {
  const std::string what = "E2B connect to sandbox " + id;
  const std::string lifetime = setting_name("lifetime");
  http::Response response = with_lifetime_cap(settings_.lifetime_seconds, lifetime, host, [&](std::int64_t seconds) {
    return call("POST", "/sandboxes/" + http::url_encode(id) + "/connect", timeout_body(seconds),
                http::Retry::idempotent, what,
                create_timeout(), nullptr);
  });
  sdk::remote::expect_sandbox(identity(), response, what, id);
  return info_of(response, what);
}

void ControlPlane::set_timeout(const std::string& id, std::int64_t seconds, const std::string& setting,
                               const sdk::Host& host) {
  const std::string what = "E2B set timeout of sandbox " + id;
  http::Response response = with_lifetime_cap(seconds, setting, host, [&](std::int64_t s) {
    return call("POST", "/sandboxes/" + http::url_encode(id) + "/timeout", timeout_body(s), http::Retry::idempotent,
                what, request_timeout(),
                nullptr);
  });
  sdk::remote::expect_sandbox(identity(), response, what, id);
}

bool ControlPlane::kill(const std::string& id) {
  const std::string what = "E2B kill sandbox " + id;
  http::Response response =
      call("DELETE", "/sandboxes/" + http::url_encode(id), "", http::Retry::idempotent, what, request_timeout(), nullptr);
  return sdk::remote::deleted(identity(), response, what);
}

std::vector<SandboxInfo> ControlPlane::list(const StringMap& metadata, const sdk::Host& host) {
  const std::string what = "E2B list sandboxes";
  // The filter is a query string of its own ("k=v&k2=v2", each part encoded), sent as
  // the value of the `metadata` parameter (encoded again).
  std::string filter;
  for (const auto& [k, v] : metadata)
    filter += (filter.empty() ? "" : "&") + http::url_encode(k) + "=" + http::url_encode(v);
  std::vector<SandboxInfo> out;
  sdk::remote::for_each_page(what, [&](const std::string& token) {
    std::string path = "/v2/sandboxes?state=running,paused&limit=100";
    if (!filter.empty()) path += "&metadata=" + http::url_encode(filter);
    if (!token.empty()) path += "&nextToken=" + http::url_encode(token);
    http::Response response = call("GET", path, "", http::Retry::idempotent, what, request_timeout(), &host);
    if (!response.ok()) throw api_error(response, what);
    json::Document doc = http::parse_body(response, what);
    if (!doc.IsArray()) throw http::unexpected_answer(what, "the answer is not a list");
    for (const json::Value& v : doc.GetArray()) out.push_back(info_from(v, what));
    return response.header("x-next-token");
  });
  return out;
}

}  // namespace corral::e2b
