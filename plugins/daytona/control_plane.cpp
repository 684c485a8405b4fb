#include "control_plane.hpp"

#include <cctype>
#include <chrono>

#include "corral/sdk/read_answer.hpp"
#include "corral/sdk/remote/errors.hpp"
#include "corral/sdk/remote/paged_list.hpp"
#include "corral/os/wait.hpp"
#include "errors.hpp"
#include "spec.hpp"

namespace corral::daytona {
namespace {

namespace http = sdk::http;
using Clock = std::chrono::steady_clock;

constexpr const char* kPageLimit = "100";

std::int64_t number_or(const json::Value& v, const char* key, std::int64_t fallback) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || it->value.IsNull()) return fallback;
  if (!it->value.IsNumber()) throw Error(ErrorCode::invalid_argument, std::string("'") + key + "' is not a number");
  return static_cast<std::int64_t>(it->value.GetDouble());
}

SandboxInfo fields_of(const json::Value& v) {
  SandboxInfo s;
  s.id = json::get_string(v, "id");
  s.name = json::get_string(v, "name");
  s.state = json::get_string(v, "state");
  s.error_reason = json::get_string(v, "errorReason");
  s.sandbox_class = json::get_string(v, "sandboxClass");
  s.snapshot = json::get_string(v, "snapshot");
  s.user = json::get_string(v, "user");
  s.target = json::get_string(v, "target");
  s.toolbox_proxy_url = json::get_string(v, "toolboxProxyUrl");
  s.created_at = json::get_string(v, "createdAt");
  s.auto_stop_minutes = number_or(v, "autoStopInterval", -1);
  s.auto_pause_minutes = number_or(v, "autoPauseInterval", -1);
  s.labels = json::get_map(v, "labels");
  return s;
}

SandboxInfo info_of(const http::Response& response, const std::string& what) {
  json::Document doc = http::parse_body(response, what);
  SandboxInfo s = sandbox_info_from(doc, what);
  if (s.id.empty()) throw http::unexpected_answer(what, "the answer has no sandbox id");
  return s;
}

std::string create_body(const Settings& settings, const StringMap& labels, const NetworkPolicy& network) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  if (!settings.snapshot.empty()) json::write_string(w, "snapshot", settings.snapshot);
  if (!settings.image.empty()) {
    // As the official SDK does for an image name: a one-line Dockerfile Daytona builds.
    w.Key("buildInfo");
    w.StartObject();
    json::write_string(w, "dockerfileContent", "FROM " + settings.image + "\n");
    w.EndObject();
  }
  if (!settings.user.empty()) json::write_string(w, "user", settings.user);
  if (!settings.target.empty()) json::write_string(w, "target", settings.target);
  json::write_map(w, "labels", labels);
  w.Key("env");
  w.StartObject();
  w.EndObject();
  // Resources only when asked: Daytona's defaults (or the snapshot's) apply otherwise.
  for (const auto& [key, value] : {std::pair{"cpu", settings.cpu}, std::pair{"memory", settings.memory_gib},
                                   std::pair{"disk", settings.disk_gib}}) {
    if (value <= 0) continue;
    w.Key(key);
    w.Int64(value);
  }
  w.Key("autoStopInterval");
  w.Int64(settings.auto_stop_minutes);
  // Open sends neither field, so the organization's own default applies.
  if (network.mode == NetworkPolicy::Mode::none) {
    w.Key("networkBlockAll");
    w.Bool(true);
  } else if (network.mode == NetworkPolicy::Mode::allow) {
    const AllowLists lists = allow_lists(network);
    if (!lists.networks.empty()) json::write_string(w, "networkAllowList", lists.networks);
    if (!lists.domains.empty()) json::write_string(w, "domainAllowList", lists.domains);
  }
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

bool failed_state(const std::string& state) { return state == "error" || state == "build_failed"; }

bool is_started(const std::string& state) { return state == "started"; }

// Pausing and stopping pass; the state they reach is whatever Daytona makes of the call
// (a pause may end stopped or archived, as the official SDK allows).
bool is_settled(const std::string& state) { return state != "pausing" && state != "stopping"; }

}  // namespace

void check_sandbox_id(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 128;
  for (char c : id) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  if (!ok) throw Error(ErrorCode::invalid_argument, "'" + id + "' is not a Daytona sandbox ID");
}

bool at_rest(const std::string& state) { return state == "stopped" || state == "archived" || state == "paused"; }

bool can_pause(const SandboxInfo& info) { return !info.sandbox_class.empty() && info.sandbox_class != "container"; }

SandboxInfo sandbox_info_from(const json::Value& v, const std::string& what) {
  return http::read_object(v, what, "a sandbox", fields_of);
}

ControlPlane::ControlPlane(const Api& api, const Settings& settings)
    : api_(api), calls_(api.at(settings.api_url)), settings_(settings) {}

std::string ControlPlane::sandbox_path(const std::string& id) const { return "/sandbox/" + http::url_encode(id); }

AllowLists allow_lists(const NetworkPolicy& network) {
  AllowLists out;
  auto append = [](std::string& list, const std::string& item) { list += (list.empty() ? "" : ",") + item; };
  for (const std::string& entry : network.allow) {
    // parse_network_policy let through only addresses, CIDRs, domains and *.domains.
    if (!is_ip_or_cidr(entry)) {
      append(out.domains, entry);
    } else if (entry.find('/') != std::string::npos) {
      append(out.networks, entry);
    } else {
      append(out.networks, entry + (entry.find(':') == std::string::npos ? "/32" : "/128"));
    }
  }
  return out;
}

SandboxInfo ControlPlane::create(const StringMap& labels, const NetworkPolicy& network) {
  const std::string what = "Daytona create sandbox";
  http::Response response = calls_.send({.method = "POST",
                                         .path = "/sandbox",
                                         .body = create_body(settings_, labels, network),
                                         .what = what,
                                         .limit = api_.create_limit(),
                                         .retry = Retry::never});
  if (response.status == 404) {
    const std::string which = !settings_.image.empty()      ? "image '" + settings_.image + "'"
                              : !settings_.snapshot.empty() ? "snapshot '" + settings_.snapshot + "'"
                                                            : "default snapshot";
    throw Error(ErrorCode::not_found, "Daytona " + which + " was not found (" + error_message(response.body) + ")",
                "pick an existing snapshot with " + identity().settings.flag("snapshot") + " (" +
                    identity().settings.env("snapshot") + "), see https://app.daytona.io/dashboard/snapshots");
  }
  if (!response.ok()) throw api_error(response, what);
  return info_of(response, what);
}

SandboxInfo ControlPlane::get(const std::string& id, const sdk::Host& host) {
  const std::string what = "Daytona get sandbox " + id;
  http::Response response =
      calls_.send({.path = sandbox_path(id), .what = what, .limit = api_.request_limit(), .cancellable = &host});
  sdk::remote::expect_sandbox(identity(), response, what, id);
  return info_of(response, what);
}

SandboxInfo ControlPlane::wait_started(SandboxInfo info, const sdk::Host& host) {
  return wait_until(std::move(info), is_started, "start", host);
}

SandboxInfo ControlPlane::wait_settled(SandboxInfo info, const sdk::Host& host) {
  const std::string verb = info.state == "stopping" ? "stop" : "pause";
  return wait_until(std::move(info), is_settled, verb, host);
}

SandboxInfo ControlPlane::wait_until(SandboxInfo info, bool (*done)(const std::string&), const std::string& verb,
                                     const sdk::Host& host) {
  const long limit_seconds = settings_.start_timeout_seconds;
  const auto deadline = Clock::now() + std::chrono::seconds(limit_seconds);
  auto delay = std::chrono::milliseconds(100);
  while (!done(info.state)) {
    if (failed_state(info.state))
      throw Error(ErrorCode::unavailable,
                  "Daytona sandbox " + info.id + " failed to " + verb + " (state " + info.state + ")" +
                      (info.error_reason.empty() ? "" : ": " + info.error_reason),
                  info.state == "build_failed"
                      ? "check the image (" + identity().settings.flag("image") +
                            ") and its build logs in the Daytona dashboard"
                      : "check the sandbox in the Daytona dashboard; retry, or pick another snapshot");
    if (Clock::now() >= deadline)
      throw Error(ErrorCode::unavailable,
                  "Daytona sandbox " + info.id + " did not " + verb + " within " + format_duration(limit_seconds) +
                      " (state " + info.state + ")",
                  "Daytona may be busy, pulling the snapshot or building the image; retry in a moment, or " +
                      allow_more_time("start-timeout"));
    host.progress("waiting for Daytona sandbox " + info.id + " to " + verb + " (" + info.state + ")");
    if (!os::sleep_unless_stopped(delay, [&host] { return host.cancelled(); }))
      throw Error(ErrorCode::cancelled, "waiting for Daytona sandbox " + info.id + ": cancelled");
    delay = std::min(std::chrono::milliseconds(2000), delay * 3 / 2);
    info = get(info.id, host);
  }
  return info;
}

SandboxInfo ControlPlane::lifecycle(const std::string& id, const std::string& action) {
  const std::string what = "Daytona " + action + " sandbox " + id;
  // Pausing or stopping twice is harmless, and one left undone costs money: sent again
  // after a server error too. Starting is only sent again after a "not now".
  http::Response response = calls_.send({.method = "POST",
                                         .path = sandbox_path(id) + "/" + action,
                                         .what = what,
                                         .limit = api_.request_limit(),
                                         .retry = action == "start" ? Retry::idempotent : Retry::settling});
  sdk::remote::expect_sandbox(identity(), response, what, id);
  return info_of(response, what);
}

SandboxInfo ControlPlane::start(const std::string& id, const sdk::Host& host) {
  return wait_started(lifecycle(id, "start"), host);
}

SandboxInfo ControlPlane::pause(const std::string& id, const sdk::Host& host) {
  return wait_settled(lifecycle(id, "pause"), host);
}

SandboxInfo ControlPlane::stop(const std::string& id, const sdk::Host& host) {
  return wait_settled(lifecycle(id, "stop"), host);
}

SandboxInfo ControlPlane::fork(const std::string& id, const std::string& name) {
  const std::string what = "Daytona fork sandbox " + id;
  rapidjson::StringBuffer body;
  {
    json::Writer w(body);
    w.StartObject();
    if (!name.empty()) json::write_string(w, "name", name);
    w.EndObject();
  }
  http::Response response = calls_.send({.method = "POST",
                                         .path = sandbox_path(id) + "/fork",
                                         .body = body.GetString(),
                                         .what = what,
                                         .limit = api_.create_limit(),
                                         .retry = Retry::never});
  sdk::remote::expect_sandbox(identity(), response, what, id);
  return info_of(response, what);
}

void ControlPlane::replace_labels(const std::string& id, const StringMap& labels) {
  const std::string what = "Daytona label sandbox " + id;
  rapidjson::StringBuffer body;
  {
    json::Writer w(body);
    w.StartObject();
    json::write_map(w, "labels", labels);
    w.EndObject();
  }
  http::Response response = calls_.send({.method = "PUT",
                                         .path = sandbox_path(id) + "/labels",
                                         .body = body.GetString(),
                                         .what = what,
                                         .limit = api_.request_limit()});
  sdk::remote::expect_sandbox(identity(), response, what, id);
}

bool ControlPlane::remove(const std::string& id) {
  const std::string what = "Daytona delete sandbox " + id;
  http::Response response =
      calls_.send({.method = "DELETE", .path = sandbox_path(id), .what = what, .limit = api_.request_limit()});
  return sdk::remote::deleted(identity(), response, what);
}

std::vector<SandboxInfo> ControlPlane::list(const StringMap& labels, const sdk::Host& host) {
  const std::string what = "Daytona list sandboxes";
  rapidjson::StringBuffer filter;
  {
    json::Writer w(filter);
    w.StartObject();
    for (const auto& [k, v] : labels) json::write_string(w, k.c_str(), v);
    w.EndObject();
  }
  std::vector<SandboxInfo> out;
  sdk::remote::for_each_page(what, [&](const std::string& cursor) {
    std::string path = std::string("/sandbox?limit=") + kPageLimit + "&labels=" + http::url_encode(filter.GetString());
    if (!cursor.empty()) path += "&cursor=" + http::url_encode(cursor);
    http::Response response =
        calls_.send({.path = path, .what = what, .limit = api_.request_limit(), .cancellable = &host});
    if (!response.ok()) throw api_error(response, what);
    json::Document doc = http::parse_body(response, what);
    if (!doc.IsObject() || !doc.HasMember("items") || !doc["items"].IsArray())
      throw http::unexpected_answer(what, "the answer has no list of items");
    for (const json::Value& v : doc["items"].GetArray()) out.push_back(sandbox_info_from(v, what));
    return http::read_answer(what, [&] { return json::get_string(doc, "nextCursor"); });
  });
  return out;
}

PreviewUrl ControlPlane::preview_url(const std::string& id, int port, const sdk::Host& host) {
  const std::string what = "Daytona preview URL of port " + std::to_string(port) + " of sandbox " + id;
  http::Response response = calls_.send({.path = sandbox_path(id) + "/ports/" + std::to_string(port) + "/preview-url",
                                         .what = what,
                                         .limit = api_.request_limit(),
                                         .cancellable = &host});
  sdk::remote::expect_sandbox(identity(), response, what, id);
  json::Document doc = http::parse_body(response, what);
  const PreviewUrl p = http::read_answer(what, [&] {
    if (!doc.IsObject()) throw Error(ErrorCode::invalid_argument, "not a JSON object");
    return PreviewUrl{json::get_string(doc, "url"), json::get_string(doc, "token")};
  });
  if (p.url.empty()) throw http::unexpected_answer(what, "the answer has no url");
  return p;
}

void ControlPlane::set_interval(const std::string& id, const std::string& setting, const std::string& what_interval,
                                std::int64_t minutes) {
  const std::string what = "Daytona set the " + what_interval + " interval of sandbox " + id;
  http::Response response = calls_.send({.method = "POST",
                                         .path = sandbox_path(id) + "/" + setting + "/" + std::to_string(minutes),
                                         .what = what,
                                         .limit = api_.request_limit()});
  sdk::remote::expect_sandbox(identity(), response, what, id);
}

void ControlPlane::set_auto_stop(const std::string& id, std::int64_t minutes) {
  set_interval(id, "autostop", "auto-stop", minutes);
}

void ControlPlane::set_auto_pause(const std::string& id, std::int64_t minutes) {
  set_interval(id, "autopause", "auto-pause", minutes);
}

std::string ControlPlane::toolbox_url(const SandboxInfo& info, const sdk::Host& host) {
  std::string url = info.toolbox_proxy_url;
  if (url.empty()) {
    const std::string what = "Daytona toolbox URL of sandbox " + info.id;
    http::Response response = calls_.send({.path = sandbox_path(info.id) + "/toolbox-proxy-url",
                                           .what = what,
                                           .limit = api_.request_limit(),
                                           .cancellable = &host});
    sdk::remote::expect_sandbox(identity(), response, what, info.id);
    json::Document doc = http::parse_body(response, what);
    url = http::read_answer(what, [&] { return doc.IsObject() ? json::get_string(doc, "url") : ""; });
  }
  while (!url.empty() && url.back() == '/') url.pop_back();
  // The toolbox receives the API key too: it must pass the same URL rules as the API.
  http::check_url(url, "the toolbox URL Daytona reported for sandbox " + info.id);
  return url + "/" + http::url_encode(info.id);
}

}  // namespace corral::daytona
