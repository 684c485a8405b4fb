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

// E2B's error body {"message": ...} for `message`.
std::string message_body(std::string_view message) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "message", message);
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

// One SandboxForkResult. An entry that cannot be read is a failed fork of its own, so
// that the forks read beside it are still known (and can be deleted).
ForkAttempt fork_attempt_of(const json::Value& v, const std::string& what) {
  ForkAttempt attempt;
  attempt.failure.status = 500;
  attempt.failure.body = message_body("E2B gave no reason");
  if (!v.IsObject()) {
    attempt.failure.body = message_body("E2B's result for this fork is not a JSON object");
    return attempt;
  }
  if (auto sandbox = v.FindMember("sandbox"); sandbox != v.MemberEnd() && !sandbox->value.IsNull()) {
    try {
      attempt.sandbox = info_from(sandbox->value, what);
      if (attempt.sandbox->id.empty()) throw http::unexpected_answer(what, "a fork has no sandboxID");
    } catch (const Error& e) {
      attempt.sandbox.reset();
      attempt.failure.body = message_body(e.what());
    }
    return attempt;
  }
  auto error = v.FindMember("error");
  if (error == v.MemberEnd() || !error->value.IsObject()) return attempt;
  if (auto code = error->value.FindMember("code"); code != error->value.MemberEnd() && code->value.IsInt())
    attempt.failure.status = code->value.GetInt();
  attempt.failure.body = json::dump(error->value);
  return attempt;
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

// A SandboxNetworkUpdateConfig (openapi.yml): the allow list as at create, and a rule per
// secret's host setting its header ("Authorization: Bearer {}" by default) on requests
// there. Every field is sent: an omitted one is cleared.
std::string network_update_body(const NetworkPolicy& network, const std::vector<Secret>& secrets) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_strings(w, "allowOut", network.allow);
  json::write_strings(w, "denyOut", {"0.0.0.0/0"});
  w.Key("rules");
  w.StartObject();
  for (const Secret& s : secrets) {
    std::string value = s.format;
    if (const size_t at = value.find("{}"); at != std::string::npos) value.replace(at, 2, s.value);
    for (const std::string& host : s.hosts) {
      w.Key(host.c_str());
      w.StartArray();
      w.StartObject();
      w.Key("transform");
      w.StartObject();
      w.Key("headers");
      w.StartObject();
      w.Key(s.header.c_str());
      w.String(value.c_str());
      w.EndObject();
      w.EndObject();
      w.EndObject();
      w.EndArray();
    }
  }
  w.EndObject();
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace

ControlPlane::ControlPlane(sdk::http::Client& client, const Settings& settings)
    : settings_(settings),
      api_(client, settings.api_url, sdk::remote::key_header(identity(), settings.api_key, "X-API-Key")),
      create_limit_(sdk::remote::limit_of(identity(), "create-timeout", settings.create_timeout_seconds)),
      request_limit_(sdk::remote::limit_of(identity(), "request-timeout", settings.request_timeout_seconds)) {}

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

SandboxInfo ControlPlane::create(const StringMap& metadata, const NetworkPolicy& network, bool pause_at_end,
                                 const sdk::Host& host) {
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
    w.Bool(pause_at_end);
    if (pause_at_end) {
      w.Key("autoPauseMemory");
      w.Bool(settings_.pause_memory);
    }
    json::write_map(w, "metadata", metadata);
    write_network(w, network);
    w.EndObject();
    return api_.send({.method = "POST",
                      .path = "/sandboxes",
                      .body = buffer.GetString(),
                      .what = what,
                      .limit = create_limit_,
                      .retry = http::Retry::never});
  });
  if (response.status == 404) throw template_not_found(settings_.template_id, response);
  if (!response.ok()) throw api_error(response, what);
  return info_of(response, what);
}

SandboxInfo ControlPlane::get(const std::string& id, const sdk::Host& host) {
  const std::string what = "E2B get sandbox " + id;
  http::Response response = api_.send(
      {.path = "/sandboxes/" + http::url_encode(id), .what = what, .limit = request_limit_, .cancellable = &host});
  sdk::remote::expect_sandbox(identity(), response, what, id);
  return info_of(response, what);
}

SandboxInfo ControlPlane::connect(const std::string& id, const sdk::Host& host) {
  const std::string what = "E2B connect to sandbox " + id;
  const std::string lifetime = setting_name("lifetime");
  http::Response response = with_lifetime_cap(settings_.lifetime_seconds, lifetime, host, [&](std::int64_t seconds) {
    return api_.send({.method = "POST",
                      .path = "/sandboxes/" + http::url_encode(id) + "/connect",
                      .body = timeout_body(seconds),
                      .what = what,
                      .limit = create_limit_});
  });
  sdk::remote::expect_sandbox(identity(), response, what, id);
  return info_of(response, what);
}

bool ControlPlane::pause(const std::string& id, bool memory) {
  const std::string what = "E2B pause sandbox " + id;
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("memory");
  w.Bool(memory);
  w.EndObject();
  // Not cancellable: a pause cut short leaves E2B's state unknown; the time limit binds it.
  http::Response response = api_.send({.method = "POST",
                                       .path = "/sandboxes/" + http::url_encode(id) + "/pause",
                                       .body = buffer.GetString(),
                                       .what = what,
                                       .limit = create_limit_,
                                       .retry = http::Retry::settling});
  if (response.status == 409) return false;
  sdk::remote::expect_sandbox(identity(), response, what, id);
  return true;
}

std::vector<ForkAttempt> ControlPlane::fork(const std::string& id, int count, const sdk::Host& host) {
  const std::string what = "E2B fork sandbox " + id;
  const std::string lifetime = setting_name("lifetime");
  http::Response response = with_lifetime_cap(settings_.lifetime_seconds, lifetime, host, [&](std::int64_t seconds) {
    rapidjson::StringBuffer buffer;
    json::Writer w(buffer);
    w.StartObject();
    w.Key("timeout");
    w.Int64(seconds);
    w.Key("count");
    w.Int(count);
    w.EndObject();
    return api_.send({.method = "POST",
                      .path = "/sandboxes/" + http::url_encode(id) + "/fork",
                      .body = buffer.GetString(),
                      .what = what,
                      .limit = create_limit_,
                      .retry = http::Retry::never});
  });
  sdk::remote::expect_sandbox(identity(), response, what, id);
  json::Document doc = http::parse_body(response, what);
  if (!doc.IsArray()) throw http::unexpected_answer(what, "the answer is not a list");
  std::vector<ForkAttempt> out;
  for (const json::Value& v : doc.GetArray()) out.push_back(fork_attempt_of(v, what));
  return out;
}

void ControlPlane::set_timeout(const std::string& id, std::int64_t seconds, const std::string& setting,
                               const sdk::Host& host) {
  const std::string what = "E2B set timeout of sandbox " + id;
  http::Response response = with_lifetime_cap(seconds, setting, host, [&](std::int64_t s) {
    return api_.send({.method = "POST",
                      .path = "/sandboxes/" + http::url_encode(id) + "/timeout",
                      .body = timeout_body(s),
                      .what = what,
                      .limit = request_limit_});
  });
  sdk::remote::expect_sandbox(identity(), response, what, id);
}

void ControlPlane::set_network(const std::string& id, const NetworkPolicy& network, const std::vector<Secret>& secrets) {
  const std::string what = "E2B set the network of sandbox " + id;
  http::Response response = api_.send({.method = "PUT",
                                       .path = "/sandboxes/" + http::url_encode(id) + "/network",
                                       .body = network_update_body(network, secrets),
                                       .what = what,
                                       .limit = request_limit_});
  sdk::remote::expect_sandbox(identity(), response, what, id);
}

bool ControlPlane::kill(const std::string& id) {
  const std::string what = "E2B kill sandbox " + id;
  http::Response response =
      api_.send({.method = "DELETE", .path = "/sandboxes/" + http::url_encode(id), .what = what, .limit = request_limit_});
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
    http::Response response = api_.send({.path = path, .what = what, .limit = request_limit_, .cancellable = &host});
    if (!response.ok()) throw api_error(response, what);
    json::Document doc = http::parse_body(response, what);
    if (!doc.IsArray()) throw http::unexpected_answer(what, "the answer is not a list");
    for (const json::Value& v : doc.GetArray()) out.push_back(info_from(v, what));
    return response.header("x-next-token");
  });
  return out;
}

}  // namespace corral::e2b
