// The stand-in's control plane: POST/GET /sandbox, GET/DELETE /sandbox/{id}, start, stop,
// pause, fork and its forks, labels, the autostop/autopause/autoarchive intervals, preview
// URLs and the toolbox proxy URL, with Daytona's JSON error bodies.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "server.hpp"
#include "tcp_reset.hpp"

namespace corral::daytona::standin {
namespace {

// Not rapidjson::Writer<StringBuffer>: with RAPIDJSON_SSE2 that specialization leaves the
// control bytes 0x1A-0x1F unescaped (RapidJSON 1.1.0), and command output may hold them.
using Writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                 rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

const char* reason_of(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Error";
  }
}

void fail(httplib::Response& res, int status, const std::string& message, const std::string& path) {
  res.status = status;
  res.set_content(error_body(status, message, path), "application/json");
}

// True for ADDRESS/PREFIX: networkAllowList's "CIDR network addresses".
bool is_cidr(const std::string& entry) {
  size_t slash = entry.find('/');
  unsigned char buf[16];
  std::string address = entry.substr(0, slash), prefix = slash == std::string::npos ? "" : entry.substr(slash + 1);
  bool v4 = inet_pton(AF_INET, address.c_str(), buf) == 1, v6 = inet_pton(AF_INET6, address.c_str(), buf) == 1;
  return (v4 || v6) && !prefix.empty() && prefix.size() <= 3 &&
         prefix.find_first_not_of("0123456789") == std::string::npos && std::stoi(prefix) <= (v4 ? 32 : 128);
}

// True for domainAllowList's "allowed domains": a DNS name of letter, digit and hyphen
// labels, or one with a leading "*." wildcard label ("*.daytona.io", as api.json's
// example); never an address, which belongs in networkAllowList.
bool is_domain_entry(const std::string& text) {
  const std::string entry = text.rfind("*.", 0) == 0 ? text.substr(2) : text;
  unsigned char buf[16];
  if (entry.empty() || entry.size() > 253 || inet_pton(AF_INET, entry.c_str(), buf) == 1) return false;
  size_t start = 0;
  while (start <= entry.size()) {
    size_t end = std::min(entry.find('.', start), entry.size());
    const std::string label = entry.substr(start, end - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-' ||
        !std::all_of(label.begin(), label.end(), [](unsigned char c) { return std::isalnum(c) || c == '-'; }))
      return false;
    start = end + 1;
  }
  return true;
}

// The first entry of comma-separated `list` that `valid` refuses, or nullopt.
std::optional<std::string> first_invalid(const std::string& list, bool (*valid)(const std::string&)) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = std::min(list.find(',', start), list.size());
    std::string entry = list.substr(start, end - start);
    if (!valid(entry)) return entry;
    start = end + 1;
  }
  return std::nullopt;
}

void write_map(Writer& w, const char* key, const std::map<std::string, std::string>& m) {
  w.Key(key);
  w.StartObject();
  for (const auto& [k, v] : m) {
    w.Key(k.c_str());
    w.String(v.c_str());
  }
  w.EndObject();
}

// api.json's SandboxDesiredState of a sandbox in `state`: where it is heading.
const char* desired_state(const std::string& state) {
  if (state == "stopping" || state == "stopped") return "stopped";
  if (state == "pausing" || state == "paused") return "paused";
  if (state == "archived") return "archived";
  return "started";
}

void write_sandbox(Writer& w, const FakeSandbox& sb, const std::string& toolbox_url) {
  w.StartObject();
  auto str = [&](const char* k, const std::string& v) {
    w.Key(k);
    w.String(v.c_str());
  };
  str("id", sb.id);
  str("organizationId", "standin-org");
  str("name", sb.name);
  str("snapshot", sb.snapshot.empty() ? "daytonaio/sandbox:standin" : sb.snapshot);
  str("user", sb.user);
  w.Key("env");
  w.StartObject();
  w.EndObject();
  write_map(w, "labels", sb.labels);
  w.Key("public");
  w.Bool(false);
  w.Key("networkBlockAll");
  w.Bool(sb.network_block_all);
  if (!sb.network_allow_list.empty()) str("networkAllowList", sb.network_allow_list);
  if (!sb.domain_allow_list.empty()) str("domainAllowList", sb.domain_allow_list);
  str("target", sb.target);
  w.Key("cpu");
  w.Double(sb.cpu);
  w.Key("gpu");
  w.Int(0);
  w.Key("memory");
  w.Double(sb.memory);
  w.Key("disk");
  w.Double(sb.disk);
  str("state", sb.state);
  str("desiredState", desired_state(sb.state));
  if (!sb.error_reason.empty()) str("errorReason", sb.error_reason);
  str("sandboxClass", sb.sandbox_class);
  w.Key("autoStopInterval");
  w.Int64(sb.auto_stop_minutes);
  w.Key("autoPauseInterval");
  w.Int64(sb.auto_pause_minutes);
  w.Key("autoArchiveInterval");
  w.Int64(sb.auto_archive_minutes);
  w.Key("autoDeleteInterval");
  w.Int64(sb.auto_delete_minutes);
  str("createdAt", rfc3339(sb.created_at));
  str("updatedAt", rfc3339(Clock::now()));
  if (!toolbox_url.empty()) str("toolboxProxyUrl", toolbox_url);
  w.EndObject();
}

bool authorized(State& st, const httplib::Request& req) {
  return !st.faults.reject_api_key && req.get_header_value("Authorization") == "Bearer " + st.api_key();
}

// Answers with a body cut in the middle and closes the connection: the stream declares
// the whole length, sends half and fails, as a connection dropped mid-answer looks.
void cut_answer(httplib::Response& res) {
  auto body = std::make_shared<std::string>(res.body.empty() ? std::string("{}") : res.body);
  const std::string type = res.get_header_value("Content-Type");
  res.body.clear();
  res.set_content_provider(body->size(), type.empty() ? "application/json" : type.c_str(),
                           [body](size_t, size_t, httplib::DataSink& sink) {
                             sink.write(body->data(), body->size() / 2);
                             return false;
                           });
}

// Answers with half the body, then resets the connection: the client gets an RST, not a
// FIN (corral::test::reset_tcp_connection); cpp-httplib's own shutdown and close then find
// it already gone.
void reset_answer(httplib::Response& res, int local_port, int peer_port) {
  auto body = std::make_shared<std::string>(res.body.empty() ? std::string("{}") : res.body);
  const std::string type = res.get_header_value("Content-Type");
  res.body.clear();
  res.set_content_provider(body->size(), type.empty() ? "application/json" : type.c_str(),
                           [body, local_port, peer_port](size_t, size_t, httplib::DataSink& sink) {
                             sink.write(body->data(), body->size() / 2);
                             if (!corral::test::reset_tcp_connection(local_port, peer_port))
                               std::fprintf(stderr, "stand-in Daytona: cannot reset the connection from port %d\n",
                                            peer_port);
                             return false;
                           });
}

// Sets `status` with Daytona's error body and the Retry-After the faults ask for.
void refuse(State& st, httplib::Response& res, int status, const std::string& message, const std::string& path) {
  if (!st.faults.retry_after.empty()) res.set_header("Retry-After", st.faults.retry_after);
  fail(res, status, message, path);
}

// Runs `body` with the state locked after the checks every route shares: the key, the
// 429 and fail_status faults of `route`; then garbles, holds, delays, cuts or resets the
// answer when asked.
void guarded(State& st, const std::string& route, const httplib::Request& req, httplib::Response& res,
             const std::function<void()>& body) {
  std::unique_lock lock(st.mutex());
  ++st.calls[route];
  for (const char* h : {"Authorization", "X-Daytona-Organization-ID", "X-Daytona-Source"})
    if (req.has_header(h)) st.header_values[h].push_back(req.get_header_value(h));
  if (!authorized(st, req)) return fail(res, 401, "Invalid credentials", req.path);
  if (st.take_rate_limit(route)) return refuse(st, res, 429, "ThrottlerException: Too Many Requests", req.path);
  if (int status = st.take_failure(route)) return refuse(st, res, status, reason_of(status), req.path);
  body();
  if (res.status < 300 && st.faults.malformed_route == route) {
    if (st.faults.truncate_answer) res.body.resize(res.body.size() / 2);  // valid JSON, cut
    else if (st.faults.deep_answer) res.set_content(std::string(400'000, '['), "application/json");
    else res.set_content("<html>not json</html>", "text/html");
  }
  st.hold_while_asked(route, lock);
  st.delay_if_slow(route, lock);
  if (st.faults.cut_route == route && st.faults.cut_times != 0 && st.faults.cut_skip > 0) {
    --st.faults.cut_skip;
  } else if (st.faults.cut_route == route && st.faults.cut_times != 0) {
    if (st.faults.cut_times > 0) --st.faults.cut_times;
    cut_answer(res);
  }
  if (st.faults.reset_route == route && st.faults.reset_times != 0) {
    if (st.faults.reset_times > 0) --st.faults.reset_times;
    reset_answer(res, req.local_port, req.remote_port);
  }
}

FakeSandbox* find(State& st, const std::string& id) {
  auto it = st.sandboxes.find(id);
  if (it == st.sandboxes.end())  // by name, as {sandboxIdOrName} allows
    it = std::find_if(st.sandboxes.begin(), st.sandboxes.end(), [&](const auto& e) { return e.second.name == id; });
  if (it == st.sandboxes.end()) return nullptr;
  st.settle(it->second);
  return &it->second;
}

// The toolbox URL sandboxes carry: none when the fault asks clients to ask for it.
std::string toolbox_url_of(const State& st) { return st.faults.no_toolbox_proxy_url ? "" : st.toolbox_url; }

void answer(State& st, httplib::Response& res, const FakeSandbox& sb) {
  res.set_content(sandbox_json(sb, toolbox_url_of(st)), "application/json");
}

// The sandbox a lifecycle call of `route` names, or nullptr after answering 404; the
// vanish fault deletes it first (as in the dashboard, between a client's get and this call).
FakeSandbox* target_of(State& st, const std::string& route, const httplib::Request& req, httplib::Response& res) {
  if (st.take_vanish(route))
    if (FakeSandbox* sb = find(st, req.matches[1])) st.remove(sb->id);
  FakeSandbox* sb = find(st, req.matches[1]);
  if (!sb) fail(res, 404, "Sandbox with ID or name " + std::string(req.matches[1]) + " not found", req.path);
  return sb;
}

// A non-negative whole interval in minutes from the path, or nullopt after answering 400.
std::optional<long> interval_of(const httplib::Request& req, httplib::Response& res, const char* what) {
  const std::string text = req.matches[2];
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) {
    fail(res, 400, std::string(what) + " interval must be a non-negative integer", req.path);
    return std::nullopt;
  }
  return std::stol(text);
}

// Answers 400 and returns false unless auto-pause `minutes` suits `sb` (api.json: only
// for classes that can pause; at most one of the auto-stop and auto-pause intervals non-zero).
bool auto_pause_allowed(const FakeSandbox& sb, long minutes, long stop_minutes, const httplib::Request& req,
                        httplib::Response& res) {
  if (minutes == 0) return true;
  if (sb.sandbox_class == "container") {
    fail(res, 400, "Auto-pause is not supported for sandbox class container", req.path);
    return false;
  }
  if (stop_minutes != 0) {
    fail(res, 400, "At most one of autoStopInterval and autoPauseInterval may be non-zero", req.path);
    return false;
  }
  return true;
}

using SandboxHandler = std::function<void(State&, FakeSandbox&, const httplib::Request&, httplib::Response&)>;

// Serves `method` on `pattern` (its first group the sandbox's ID or name) as fault route
// `route`: guarded()'s checks, then `handle` on the sandbox it names (404 without one).
void on_sandbox(httplib::Server& server, State& st, const std::string& method, const std::string& pattern,
                const std::string& route, SandboxHandler handle) {
  auto serve = [&st, route, handle](const httplib::Request& req, httplib::Response& res) {
    guarded(st, route, req, res, [&] {
      if (FakeSandbox* sb = target_of(st, route, req, res)) handle(st, *sb, req, res);
    });
  };
  if (method == "GET") server.Get(pattern, serve);
  else if (method == "PUT") server.Put(pattern, serve);
  else server.Post(pattern, serve);
}

long int_member(const rapidjson::Value& body, const char* key, long fallback) {
  auto it = body.FindMember(key);
  return it != body.MemberEnd() && it->value.IsInt64() ? static_cast<long>(it->value.GetInt64()) : fallback;
}

}  // namespace

std::string error_body(int status, const std::string& message, const std::string& path) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  w.Key("statusCode");
  w.Int(status);
  w.Key("error");
  w.String(reason_of(status));
  w.Key("message");
  w.String(message.c_str());
  w.Key("path");
  w.String(path.c_str());
  w.Key("timestamp");
  w.String(rfc3339(Clock::now()).c_str());
  w.EndObject();
  return b.GetString();
}

std::string sandbox_json(const FakeSandbox& sb, const std::string& toolbox_url) {
  rapidjson::StringBuffer b;
  Writer w(b);
  write_sandbox(w, sb, toolbox_url);
  return b.GetString();
}

void register_control_plane(httplib::Server& server, State& st) {
  server.Post("/api/sandbox", [&st](const httplib::Request& req, httplib::Response& res) {
    guarded(st, "create", req, res, [&] {
      st.create_bodies.push_back(req.body);
      if (st.take_quota("create")) return fail(res, 400, st.faults.quota_message, req.path);
      rapidjson::Document body;
      body.Parse(req.body.c_str());
      if (body.HasParseError() || !body.IsObject()) return fail(res, 400, "invalid JSON body", req.path);
      if (body.HasMember("snapshot") && body["snapshot"].IsString() &&
          std::string(body["snapshot"].GetString()) == "missing-snapshot")
        return fail(res, 404, "Snapshot missing-snapshot not found", req.path);
      if (body.HasMember("networkBlockAll") && !body["networkBlockAll"].IsBool())
        return fail(res, 400, "networkBlockAll must be a boolean value", req.path);
      std::string allow_list, domain_list;
      if (body.HasMember("networkAllowList")) {
        if (!body["networkAllowList"].IsString())
          return fail(res, 400, "networkAllowList must be a string", req.path);
        allow_list = body["networkAllowList"].GetString();
        // "Comma-separated list of allowed CIDR network addresses".
        if (auto bad = first_invalid(allow_list, is_cidr))
          return fail(res, 400, "Invalid network allow list: '" + *bad + "' is not a valid CIDR network address",
                      req.path);
      }
      if (body.HasMember("domainAllowList")) {
        if (!body["domainAllowList"].IsString())
          return fail(res, 400, "domainAllowList must be a string", req.path);
        domain_list = body["domainAllowList"].GetString();
        // "Comma-separated list of allowed domains for the sandbox" ("example.com,*.daytona.io").
        if (auto bad = first_invalid(domain_list, is_domain_entry))
          return fail(res, 400, "Invalid domain allow list: '" + *bad + "' is not a valid domain", req.path);
      }
      FakeSandbox& sb = st.add_sandbox();
      sb.network_block_all = body.HasMember("networkBlockAll") && body["networkBlockAll"].GetBool();
      sb.network_allow_list = allow_list;
      sb.domain_allow_list = domain_list;
      if (body.HasMember("labels") && body["labels"].IsObject())
        for (auto& m : body["labels"].GetObject())
          if (m.value.IsString()) sb.labels[m.name.GetString()] = m.value.GetString();
      if (body.HasMember("snapshot") && body["snapshot"].IsString()) sb.snapshot = body["snapshot"].GetString();
      if (sb.snapshot.rfind("daytona-vm", 0) == 0) sb.sandbox_class = "linux-vm";
      if (body.HasMember("user") && body["user"].IsString()) sb.user = body["user"].GetString();
      if (body.HasMember("target") && body["target"].IsString()) sb.target = body["target"].GetString();
      sb.auto_stop_minutes = int_member(body, "autoStopInterval", sb.auto_stop_minutes);
      sb.auto_pause_minutes = int_member(body, "autoPauseInterval", 0);
      if (sb.auto_pause_minutes != 0 && !body.HasMember("autoStopInterval")) sb.auto_stop_minutes = 0;
      sb.auto_archive_minutes = int_member(body, "autoArchiveInterval", sb.auto_archive_minutes);
      sb.auto_delete_minutes = int_member(body, "autoDeleteInterval", sb.auto_delete_minutes);
      if (!auto_pause_allowed(sb, sb.auto_pause_minutes, sb.auto_stop_minutes, req, res)) {
        st.remove(sb.id);
        return;
      }
      if (body.HasMember("cpu") && body["cpu"].IsNumber()) sb.cpu = body["cpu"].GetDouble();
      if (body.HasMember("memory") && body["memory"].IsNumber()) sb.memory = body["memory"].GetDouble();
      if (body.HasMember("disk") && body["disk"].IsNumber()) sb.disk = body["disk"].GetDouble();
      std::filesystem::create_directories(State::home_of(sb));
      answer(st, res, sb);
    });
  });

  server.Get("/api/sandbox", [&st](const httplib::Request& req, httplib::Response& res) {
    guarded(st, "list", req, res, [&] {
      std::map<std::string, std::string> filter;
      if (req.has_param("labels")) {
        const std::string text = req.get_param_value("labels");
        st.list_label_filters.push_back(text);
        rapidjson::Document labels;
        labels.Parse(text.c_str());
        if (labels.HasParseError() || !labels.IsObject()) return fail(res, 400, "labels must be a JSON object", req.path);
        for (auto& m : labels.GetObject())
          if (m.value.IsString()) filter[m.name.GetString()] = m.value.GetString();
      }
      int limit = req.has_param("limit") ? std::stoi(req.get_param_value("limit")) : 100;
      limit = std::min(limit, st.page_size);
      const std::string cursor = req.has_param("cursor") ? req.get_param_value("cursor") : "";
      rapidjson::StringBuffer b;
      Writer w(b);
      w.StartObject();
      w.Key("items");
      w.StartArray();
      int n = 0;
      std::string last;
      bool more = false;
      for (auto& [id, sb] : st.sandboxes) {  // ordered by id: the cursor is the last id sent
        if (!cursor.empty() && id <= cursor) continue;
        bool match = true;
        for (const auto& [k, v] : filter) {
          auto it = sb.labels.find(k);
          match = match && it != sb.labels.end() && it->second == v;
        }
        if (!match) continue;
        if (n == limit) {
          more = true;
          break;
        }
        st.settle(sb);
        write_sandbox(w, sb, toolbox_url_of(st));
        last = id;
        ++n;
      }
      w.EndArray();
      w.Key("nextCursor");
      if (more) w.String(last.c_str());
      else w.Null();
      w.EndObject();
      res.set_content(b.GetString(), "application/json");
    });
  });

  server.Get(R"(/api/sandbox/([^/]+))", [&st](const httplib::Request& req, httplib::Response& res) {
    guarded(st, "get", req, res, [&] {
      FakeSandbox* sb = find(st, req.matches[1]);
      if (!sb) return fail(res, 404, "Sandbox with ID or name " + std::string(req.matches[1]) + " not found", req.path);
      answer(st, res, *sb);
    });
  });

  server.Delete(R"(/api/sandbox/([^/]+))", [&st](const httplib::Request& req, httplib::Response& res) {
    guarded(st, "delete", req, res, [&] {
      FakeSandbox* sb = find(st, req.matches[1]);
      if (!sb) return fail(res, 404, "Sandbox with ID or name " + std::string(req.matches[1]) + " not found", req.path);
      FakeSandbox copy = *sb;
      copy.state = "destroying";
      st.remove(copy.id);
      answer(st, res, copy);
    });
  });

  // "Starts a stopped or archived sandbox, or resumes a paused sandbox."
  on_sandbox(server, st, "POST", R"(/api/sandbox/([^/]+)/start)", "start",
             [](State& st, FakeSandbox& sb, const httplib::Request& req, httplib::Response& res) {
               const bool stopped = sb.state == "stopped" || sb.state == "archived", paused = sb.state == "paused";
               if ((stopped || paused) && st.take_quota("start"))
                 return fail(res, 400, st.faults.quota_message, req.path);
               if (stopped) st.begin(sb, "starting");
               if (paused) st.begin(sb, "resuming");
               answer(st, res, sb);
             });

  on_sandbox(server, st, "POST", R"(/api/sandbox/([^/]+)/stop)", "stop",
             [](State& st, FakeSandbox& sb, const httplib::Request& req, httplib::Response& res) {
               if (sb.state != "started" && sb.state != "paused")
                 return fail(res, 400, "Sandbox is not started (state " + sb.state + ")", req.path);
               st.stop_processes(sb);
               st.begin(sb, "stopping");
               answer(st, res, sb);
             });

  // Only VM sandboxes pause (Daytona's docs: pause/resume is VM-only); their processes
  // are frozen, not ended.
  on_sandbox(server, st, "POST", R"(/api/sandbox/([^/]+)/pause)", "pause",
             [](State& st, FakeSandbox& sb, const httplib::Request& req, httplib::Response& res) {
               if (sb.sandbox_class == "container")
                 return fail(res, 400, "Pause is not supported for sandbox class container", req.path);
               if (sb.state != "started")
                 return fail(res, 400, "Sandbox is not started (state " + sb.state + ")", req.path);
               st.freeze_processes(sb, true);
               st.begin(sb, "pausing");
               answer(st, res, sb);
             });

  // A copy of the sandbox's disk as a new sandbox (ForkSandbox: an optional name), which
  // then starts; its labels and settings are the source's.
  on_sandbox(server, st, "POST", R"(/api/sandbox/([^/]+)/fork)", "fork",
             [](State& st, FakeSandbox& sb, const httplib::Request& req, httplib::Response& res) {
               rapidjson::Document body;
               body.Parse(req.body.c_str());
               if (body.HasParseError() || !body.IsObject()) return fail(res, 400, "invalid JSON body", req.path);
               std::string name;
               if (body.HasMember("name")) {
                 if (!body["name"].IsString()) return fail(res, 400, "name must be a string", req.path);
                 name = body["name"].GetString();
                 for (const auto& [id, other] : st.sandboxes)
                   if (other.name == name)
                     return fail(res, 409, "Sandbox with name " + name + " already exists", req.path);
               }
               if (sb.state != "started" && sb.state != "stopped" && sb.state != "paused")
                 return fail(res, 400, "Sandbox cannot be forked in state " + sb.state, req.path);
               if (st.take_quota("fork")) return fail(res, 400, st.faults.quota_message, req.path);
               answer(st, res, st.fork_sandbox(sb, name));
             });

  on_sandbox(server, st, "GET", R"(/api/sandbox/([^/]+)/forks)", "forks",
             [](State& st, FakeSandbox& sb, const httplib::Request&, httplib::Response& res) {
               rapidjson::StringBuffer b;
               Writer w(b);
               w.StartArray();
               for (auto& [id, other] : st.sandboxes)
                 if (other.parent == sb.id) {
                   st.settle(other);
                   write_sandbox(w, other, toolbox_url_of(st));
                 }
               w.EndArray();
               res.set_content(b.GetString(), "application/json");
             });

  on_sandbox(server, st, "PUT", R"(/api/sandbox/([^/]+)/labels)", "labels",
             [](State&, FakeSandbox& sb, const httplib::Request& req, httplib::Response& res) {
               rapidjson::Document body;
               body.Parse(req.body.c_str());
               if (body.HasParseError() || !body.IsObject() || !body.HasMember("labels") || !body["labels"].IsObject())
                 return fail(res, 400, "labels must be an object", req.path);
               std::map<std::string, std::string> labels;
               for (auto& m : body["labels"].GetObject()) {
                 if (!m.value.IsString()) return fail(res, 400, "label values must be strings", req.path);
                 labels[m.name.GetString()] = m.value.GetString();
               }
               sb.labels = labels;
               rapidjson::StringBuffer b;
               Writer w(b);
               w.StartObject();
               write_map(w, "labels", sb.labels);
               w.EndObject();
               res.set_content(b.GetString(), "application/json");
             });

  on_sandbox(server, st, "POST", R"(/api/sandbox/([^/]+)/autostop/(-?\d+))", "autostop",
             [](State& st, FakeSandbox& sb, const httplib::Request& req, httplib::Response& res) {
               const auto minutes = interval_of(req, res, "Auto-stop");
               if (!minutes) return;
               if (*minutes != 0 && sb.auto_pause_minutes != 0)
                 return fail(res, 400, "At most one of autoStopInterval and autoPauseInterval may be non-zero",
                             req.path);
               sb.auto_stop_minutes = *minutes;
               answer(st, res, sb);
             });

  on_sandbox(server, st, "POST", R"(/api/sandbox/([^/]+)/autopause/(-?\d+))", "autopause",
             [](State& st, FakeSandbox& sb, const httplib::Request& req, httplib::Response& res) {
               const auto minutes = interval_of(req, res, "Auto-pause");
               if (!minutes || !auto_pause_allowed(sb, *minutes, sb.auto_stop_minutes, req, res)) return;
               sb.auto_pause_minutes = *minutes;
               answer(st, res, sb);
             });

  // "0 means the maximum interval will be used" (30 days here).
  on_sandbox(server, st, "POST", R"(/api/sandbox/([^/]+)/autoarchive/(-?\d+))", "autoarchive",
             [](State& st, FakeSandbox& sb, const httplib::Request& req, httplib::Response& res) {
               const auto minutes = interval_of(req, res, "Auto-archive");
               if (!minutes) return;
               sb.auto_archive_minutes = *minutes == 0 ? 43200 : *minutes;
               answer(st, res, sb);
             });

  server.Get(R"(/api/sandbox/([^/]+)/ports/(\d+)/preview-url)", [&st](const httplib::Request& req, httplib::Response& res) {
    guarded(st, "preview-url", req, res, [&] {
      FakeSandbox* sb = find(st, req.matches[1]);
      if (!sb) return fail(res, 404, "Sandbox not found", req.path);
      const int port = std::stoi(req.matches[2]);
      if (port < 1 || port > 65535) return fail(res, 400, "Invalid port", req.path);
      std::string token = st.faults.public_preview ? "" : random_id(30);
      if (!token.empty()) st.issued_tokens.push_back(token);
      rapidjson::StringBuffer b;
      Writer w(b);
      w.StartObject();
      w.Key("sandboxId");
      w.String(sb->id.c_str());
      w.Key("url");
      w.String(("https://" + std::to_string(port) + "-" + sb->id + ".proxy.standin.daytona.test").c_str());
      w.Key("token");
      w.String(token.c_str());
      w.EndObject();
      res.set_content(b.GetString(), "application/json");
    });
  });

  server.Get(R"(/api/sandbox/([^/]+)/toolbox-proxy-url)", [&st](const httplib::Request& req, httplib::Response& res) {
    guarded(st, "toolbox-proxy-url", req, res, [&] {
      if (!find(st, req.matches[1])) return fail(res, 404, "Sandbox not found", req.path);
      rapidjson::StringBuffer b;
      Writer w(b);
      w.StartObject();
      w.Key("url");
      w.String(st.toolbox_url.c_str());
      w.EndObject();
      res.set_content(b.GetString(), "application/json");
    });
  });
}

}  // namespace corral::daytona::standin
