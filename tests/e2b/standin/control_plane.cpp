// The stand-in's control plane: the parts of openapi.yml corral uses, with E2B's status
// codes and {"code","message"} error bodies.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <arpa/inet.h>

#include <algorithm>

#include "server.hpp"

namespace corral::e2b::standin {
namespace {

// Not Writer<StringBuffer>: its SSE2 specialization (RapidJSON 1.1.0) leaves 0x1A-0x1F unescaped.
using Writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>>;

void write_metadata(Writer& w, const FakeSandbox& sb) {
  w.Key("metadata");
  w.StartObject();
  for (const auto& [k, v] : sb.metadata) {
    w.Key(k.c_str());
    w.String(v.c_str());
  }
  w.EndObject();
}

// Fields common to Sandbox, SandboxDetail and ListedSandbox.
void write_common(Writer& w, const FakeSandbox& sb) {
  w.Key("templateID");
  w.String(sb.template_id.c_str());
  w.Key("sandboxID");
  w.String(sb.id.c_str());
  if (!sb.alias.empty()) {
    w.Key("alias");
    w.String(sb.alias.c_str());
  }
  w.Key("clientID");
  w.String("6532622b");
  w.Key("envdVersion");
  w.String(sb.envd_version.c_str());
}

// `domain`: a string when E2B names the sandbox's domain, else null.
void write_domain(Writer& w, const std::string& domain) {
  w.Key("domain");
  if (domain.empty()) w.Null();
  else w.String(domain.c_str());
}

// The Sandbox schema (create, connect, fork): carries the envd token, no state.
void write_sandbox(Writer& w, const FakeSandbox& sb, const std::string& domain) {
  w.StartObject();
  write_common(w, sb);
  if (!sb.access_token.empty()) {
    w.Key("envdAccessToken");
    w.String(sb.access_token.c_str());
  }
  w.Key("trafficAccessToken");
  w.Null();
  write_domain(w, domain);
  w.EndObject();
}

std::string sandbox_json(const FakeSandbox& sb, const std::string& domain) {
  rapidjson::StringBuffer b;
  Writer w(b);
  write_sandbox(w, sb, domain);
  return b.GetString();
}

// SandboxLifecycle: what happens at the end of the sandbox's lifetime.
void write_lifecycle(Writer& w, const FakeSandbox& sb) {
  w.Key("lifecycle");
  w.StartObject();
  w.Key("autoResume");
  w.Bool(false);
  w.Key("onTimeout");
  w.String(sb.auto_pause ? "pause" : "kill");
  w.EndObject();
}

// SandboxDetail (detail = true) or ListedSandbox.
void write_listed(Writer& w, const FakeSandbox& sb, bool detail, const std::string& domain) {
  w.StartObject();
  write_common(w, sb);
  w.Key("startedAt");
  w.String(rfc3339(sb.started_at).c_str());
  w.Key("endAt");
  w.String(rfc3339(sb.end_at).c_str());
  w.Key("cpuCount");
  w.Int(2);
  w.Key("memoryMB");
  w.Int(512);
  w.Key("diskSizeMB");
  w.Int(1024);
  w.Key("state");
  w.String(sb.state.c_str());
  write_metadata(w, sb);
  if (detail) {
    if (!sb.access_token.empty()) {
      w.Key("envdAccessToken");
      w.String(sb.access_token.c_str());
    }
    write_domain(w, domain);
    // "Null means it was not explicitly set."
    w.Key("allowInternetAccess");
    if (sb.allow_internet_access) w.Bool(*sb.allow_internet_access);
    else w.Null();
    write_lifecycle(w, sb);
    if (!sb.allow_out.empty() || !sb.deny_out.empty()) {
      w.Key("network");
      w.StartObject();
      for (auto [key, list] : {std::pair{"allowOut", &sb.allow_out}, std::pair{"denyOut", &sb.deny_out}}) {
        w.Key(key);
        w.StartArray();
        for (const std::string& e : *list) w.String(e.c_str());
        w.EndArray();
      }
      w.EndObject();
    }
  }
  w.EndObject();
}

// The `error` of a SandboxForkResult: E2B's Error schema {code, message}.
void write_fork_error(Writer& w, int code, const std::string& message) {
  w.Key("error");
  w.StartObject();
  w.Key("code");
  w.Int(code);
  w.Key("message");
  w.String(message.c_str());
  w.EndObject();
}

// True for an IPv4/IPv6 address, optionally with a /prefix: what a denyOut entry may be.
bool is_address_or_cidr(const std::string& entry) {
  std::string address = entry.substr(0, entry.find('/'));
  unsigned char buf[16];
  return inet_pton(AF_INET, address.c_str(), buf) == 1 || inet_pton(AF_INET6, address.c_str(), buf) == 1;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

// "k=v&k2=v2" with each part percent-encoded, as the metadata filter is defined.
std::map<std::string, std::string> parse_filter(const std::string& query) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    std::string pair = query.substr(start, end - start);
    size_t eq = pair.find('=');
    if (eq != std::string::npos) out[percent_decode(pair.substr(0, eq))] = percent_decode(pair.substr(eq + 1));
    start = end + 1;
  }
  return out;
}

class Api {
 public:
  explicit Api(State& state) : state_(state) {}

  // Bookkeeping and the faults every route shares; false when `res` is already answered.
  bool admit(const std::string& route, const httplib::Request& req, httplib::Response& res) {
    ++state_.calls[route];
    for (const auto& [name, value] : req.headers) state_.header_values[route].push_back(value);
    state_.expire();
    // The vanish fault on a control-plane route: the sandbox the path names is gone.
    if (req.matches.size() > 1 && state_.vanishes(route)) state_.remove(req.matches[1]);
    Faults& f = state_.faults;
    if (!f.redirect_to.empty()) {
      res.status = 307;
      res.set_header("Location", f.redirect_to + req.path);
      return false;
    }
    if (f.reject_api_key || req.get_header_value("X-API-Key") != state_.api_key()) {
      http_error(res, 401, "Invalid API key, please visit https://e2b.dev/docs/api-key for more information.");
      return false;
    }
    if (state_.fails(route)) {
      if (!f.retry_after.empty()) res.set_header("Retry-After", f.retry_after);
      std::string why = f.fail_status == 429 ? "Rate limit exceeded, please try again later"
                                             : "stand-in fault: the service is unavailable";
      // Careless servers quote the request back: a client must not print what they echo.
      if (f.echo_secrets) why += " (request had X-API-Key: " + req.get_header_value("X-API-Key") + ")";
      http_error(res, f.fail_status, why);
      return false;
    }
    return true;
  }

  // The `timeout` of a request body; nullopt (and a 400 answer) when it is invalid.
  std::optional<long> timeout_of(const rapidjson::Document& doc, httplib::Response& res, long fallback,
                                 bool required) {
    if (!doc.IsObject()) {
      http_error(res, 400, "request body must be a JSON object");
      return std::nullopt;
    }
    auto it = doc.FindMember("timeout");
    if (it == doc.MemberEnd()) {
      if (required) {
        http_error(res, 400, "request body has no 'timeout'");
        return std::nullopt;
      }
      return fallback;
    }
    if (!it->value.IsInt64() || it->value.GetInt64() < 0) {
      http_error(res, 400, "'timeout' must be a non-negative integer");
      return std::nullopt;
    }
    long t = static_cast<long>(it->value.GetInt64());
    const Faults& f = state_.faults;
    if (f.lifetime_cap_hours > 0 && t > f.lifetime_cap_hours * 3600L) {
      http_error(res, 400, f.cap_message_without_number
                          ? "Timeout cannot be greater than the limit of your team"
                          : "Timeout cannot be greater than " + std::to_string(f.lifetime_cap_hours) + " hours");
      return std::nullopt;
    }
    return t;
  }

  // The malformed_route fault: a 2xx answer that breaks the API's schema; true when sent.
  bool malformed(const std::string& route, httplib::Response& res, int status) {
    if (state_.faults.malformed_route != route) return false;
    res.status = status;
    if (state_.faults.malformed == "wrong-types")
      res.set_content(route == "list" ? R"([{"sandboxID":42,"metadata":"none"}])" : R"({"sandboxID":42,"templateID":["base"]})",
                      "application/json");
    else if (state_.faults.malformed == "deep")  // valid JSON's first 400,000 brackets: nested past any stack
      res.set_content(std::string(400'000, '['), "application/json");
    else if (state_.faults.malformed == "truncated")  // complete as HTTP, cut as JSON
      res.set_content(route == "list" ? R"([{"templateID":"base","sandboxID":"i)" : R"({"templateID":"base","sandboxID":"i)",
                      "application/json");
    else
      res.set_content("<html><body>Welcome to the proxy</body></html>", "text/html");
    return true;
  }

  // The boolean `name` of a request body, `fallback` when absent; nullopt (and a 400
  // answer) when it is not a boolean.
  std::optional<bool> bool_field(const rapidjson::Document& doc, const char* name, bool fallback,
                                 httplib::Response& res) {
    if (!doc.IsObject() || !doc.HasMember(name)) return fallback;
    if (!doc[name].IsBool()) {
      http_error(res, 400, std::string("'") + name + "' must be a boolean");
      return std::nullopt;
    }
    return doc[name].GetBool();
  }

  // True when the team's concurrent-sandbox limit (Faults::max_sandboxes) is reached.
  bool at_limit() const {
    return state_.faults.max_sandboxes > 0 && state_.running() >= state_.faults.max_sandboxes;
  }
  std::string over_limit_message() const {
    return "You have reached the maximum number of concurrent E2B sandboxes (" +
           std::to_string(state_.faults.max_sandboxes) + ")";
  }
  void refuse_over_limit(httplib::Response& res) {
    if (!state_.faults.retry_after.empty()) res.set_header("Retry-After", state_.faults.retry_after);
    http_error(res, 429, over_limit_message());
  }

  FakeSandbox* find(const std::string& id, httplib::Response& res) {
    auto it = state_.sandboxes.find(id);
    if (it == state_.sandboxes.end()) {
      http_error(res, 404, "sandbox \"" + id + "\" doesn't exist or you don't have access to it");
      return nullptr;
    }
    return &it->second;
  }

  void create(const httplib::Request& req, httplib::Response& res) {
    state_.create_bodies.push_back(req.body);
    if (!admit("create", req, res)) return;
    rapidjson::Document doc;
    doc.Parse(req.body.c_str());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("templateID") || !doc["templateID"].IsString())
      return http_error(res, 400, "request body must be a NewSandbox with a templateID");
    std::string tpl = doc["templateID"].GetString();
    if (!state_.templates.count(tpl)) return http_error(res, 404, "template '" + tpl + "' not found");
    if (at_limit()) return refuse_over_limit(res);
    auto timeout = timeout_of(doc, res, 15, false);
    if (!timeout) return;
    bool secure = doc.HasMember("secure") && doc["secure"].IsBool() && doc["secure"].GetBool();
    auto auto_pause = bool_field(doc, "autoPause", false, res);
    auto auto_pause_memory = bool_field(doc, "autoPauseMemory", true, res);
    if (!auto_pause || !auto_pause_memory) return;
    std::map<std::string, std::string> metadata;
    if (doc.HasMember("metadata") && doc["metadata"].IsObject())
      for (auto& m : doc["metadata"].GetObject()) {
        if (!m.value.IsString()) return http_error(res, 400, "metadata values must be strings");
        metadata[m.name.GetString()] = m.value.GetString();
      }
    std::optional<bool> allow_internet_access;
    if (doc.HasMember("allow_internet_access")) {
      if (!doc["allow_internet_access"].IsBool())
        return http_error(res, 400, "allow_internet_access must be a boolean");
      allow_internet_access = doc["allow_internet_access"].GetBool();
    }
    std::vector<std::string> allow_out, deny_out;
    if (doc.HasMember("network")) {
      const rapidjson::Value& network = doc["network"];
      if (!network.IsObject()) return http_error(res, 400, "network must be a SandboxNetworkConfig object");
      for (auto [key, into] : {std::pair{"allowOut", &allow_out}, std::pair{"denyOut", &deny_out}}) {
        if (!network.HasMember(key)) continue;
        if (!network[key].IsArray()) return http_error(res, 400, std::string("network.") + key + " must be an array");
        for (const auto& entry : network[key].GetArray()) {
          if (!entry.IsString()) return http_error(res, 400, std::string("network.") + key + " holds strings");
          into->push_back(entry.GetString());
        }
      }
      // "Domain names are not supported for deny rules."
      for (const std::string& entry : deny_out)
        if (!is_address_or_cidr(entry))
          return http_error(res, 400,
                            "invalid denyOut entry \"" + entry + "\": domain names are not supported for deny rules");
    }
    FakeSandbox& sb = state_.add_sandbox(tpl, secure, *timeout);
    sb.metadata = std::move(metadata);
    sb.allow_internet_access = allow_internet_access;
    sb.allow_out = std::move(allow_out);
    sb.deny_out = std::move(deny_out);
    sb.auto_pause = *auto_pause;
    sb.auto_pause_memory = *auto_pause_memory;
    if (tpl != "base") sb.alias = tpl;
    if (malformed("create", res, 201)) return;  // the sandbox exists all the same
    res.status = 201;
    res.set_content(sandbox_json(sb, state_.faults.sandbox_domain), "application/json");
  }

  void get(const httplib::Request& req, httplib::Response& res) {
    if (!admit("get", req, res)) return;
    FakeSandbox* sb = find(req.matches[1], res);
    if (!sb) return;
    if (malformed("get", res, 200)) return;
    rapidjson::StringBuffer b;
    Writer w(b);
    write_listed(w, *sb, true, state_.faults.sandbox_domain);
    res.set_content(b.GetString(), "application/json");
  }

  void kill(const httplib::Request& req, httplib::Response& res) {
    if (!admit("kill", req, res)) return;
    if (!find(req.matches[1], res)) return;
    state_.remove(req.matches[1]);
    res.status = 204;
  }

  void connect(const httplib::Request& req, httplib::Response& res) {
    if (!admit("connect", req, res)) return;
    FakeSandbox* sb = find(req.matches[1], res);
    if (!sb) return;
    rapidjson::Document doc;
    doc.Parse(req.body.c_str());
    auto timeout = timeout_of(doc, res, 0, true);
    if (!timeout) return;
    const bool paused = sb->state == "paused";
    // A resumed sandbox runs again, so it counts against the team's limit.
    if (paused && at_limit()) return refuse_over_limit(res);
    // "TTL is only extended."
    sb->end_at = std::max(sb->end_at, Clock::now() + std::chrono::seconds(*timeout));
    if (paused) state_.resume(*sb);
    res.status = paused ? 201 : 200;
    res.set_content(sandbox_json(*sb, state_.faults.sandbox_domain), "application/json");
  }

  // POST /sandboxes/{id}/pause: 204 paused; 409 when it already is.
  void pause(const httplib::Request& req, httplib::Response& res) {
    if (!admit("pause", req, res)) return;
    FakeSandbox* sb = find(req.matches[1], res);
    if (!sb) return;
    rapidjson::Document doc;
    doc.Parse(req.body.empty() ? "{}" : req.body.c_str());
    if (doc.HasParseError() || !doc.IsObject()) return http_error(res, 400, "request body must be a JSON object");
    auto memory = bool_field(doc, "memory", true, res);
    if (!memory) return;
    state_.pause_bodies.push_back(req.body);
    if (sb->state == "paused") return http_error(res, 409, "sandbox \"" + sb->id + "\" is already paused");
    state_.pause(*sb, *memory);
    res.status = 204;
  }

  // POST /sandboxes/{id}/fork: 201 with one SandboxForkResult per fork asked for, each
  // either the new sandbox or why it could not start (the concurrent-sandbox limit).
  void fork(const httplib::Request& req, httplib::Response& res) {
    state_.fork_bodies.push_back(req.body);
    if (!admit("fork", req, res)) return;
    FakeSandbox* sb = find(req.matches[1], res);
    if (!sb) return;
    rapidjson::Document doc;
    doc.Parse(req.body.empty() ? "{}" : req.body.c_str());
    auto timeout = timeout_of(doc, res, 15, false);
    if (!timeout) return;
    long count = 1;
    if (doc.HasMember("count")) {
      if (!doc["count"].IsInt64() || doc["count"].GetInt64() < 1 || doc["count"].GetInt64() > 100)
        return http_error(res, 400, "'count' must be an integer from 1 to 100");
      count = static_cast<long>(doc["count"].GetInt64());
    }
    // It checkpoints the running sandbox: a paused one has nothing to checkpoint.
    if (sb->state == "paused")
      return http_error(res, 409, "sandbox \"" + sb->id + "\" is paused; resume it before forking it");
    rapidjson::StringBuffer b;
    Writer w(b);
    w.StartArray();
    for (long i = 0; i < count; ++i) {
      w.StartObject();
      if (at_limit()) {
        write_fork_error(w, 429, over_limit_message());
      } else {
        const FakeSandbox* made = nullptr;
        std::string why;
        try {
          made = &state_.fork(*sb, *timeout);
        } catch (const std::filesystem::filesystem_error& e) {
          why = std::string("could not copy the sandbox: ") + e.what();
        }
        if (made) {
          w.Key("sandbox");
          write_sandbox(w, *made, state_.faults.sandbox_domain);
        } else {
          write_fork_error(w, 500, why);
        }
      }
      w.EndObject();
    }
    w.EndArray();
    res.status = 201;
    res.set_content(b.GetString(), "application/json");
  }

  void set_timeout(const httplib::Request& req, httplib::Response& res) {
    if (!admit("timeout", req, res)) return;
    FakeSandbox* sb = find(req.matches[1], res);
    if (!sb) return;
    rapidjson::Document doc;
    doc.Parse(req.body.c_str());
    auto timeout = timeout_of(doc, res, 0, true);
    if (!timeout) return;
    sb->end_at = Clock::now() + std::chrono::seconds(*timeout);
    res.status = 204;
  }

  // PUT /sandboxes/{id}/network: a SandboxNetworkUpdateConfig, each field of its type;
  // deny rules take addresses and CIDRs only, and a rule's transform sets string headers.
  void set_network(const httplib::Request& req, httplib::Response& res) {
    if (!admit("network", req, res)) return;
    FakeSandbox* sb = find(req.matches[1], res);
    if (!sb) return;
    rapidjson::Document doc;
    doc.Parse(req.body.c_str());
    if (doc.HasParseError() || !doc.IsObject()) return http_error(res, 400, "the body is not a JSON object");
    const auto strings = [](const rapidjson::Value& v) {
      if (!v.IsArray()) return false;
      for (const auto& e : v.GetArray())
        if (!e.IsString()) return false;
      return true;
    };
    if (doc.HasMember("allowOut") && !strings(doc["allowOut"])) return http_error(res, 400, "allowOut: strings");
    if (doc.HasMember("denyOut")) {
      if (!strings(doc["denyOut"])) return http_error(res, 400, "denyOut: strings");
      for (const auto& e : doc["denyOut"].GetArray())
        if (std::string(e.GetString()).find_first_not_of("0123456789abcdefABCDEF.:/") != std::string::npos)
          return http_error(res, 400, "denyOut takes IP addresses and CIDRs only");
    }
    if (doc.HasMember("rules")) {
      if (!doc["rules"].IsObject()) return http_error(res, 400, "rules: an object");
      for (const auto& [domain, list] : doc["rules"].GetObject()) {
        if (!list.IsArray()) return http_error(res, 400, "rules: each domain's rules are an array");
        for (const auto& rule : list.GetArray()) {
          if (!rule.IsObject()) return http_error(res, 400, "a rule is an object");
          if (!rule.HasMember("transform")) continue;
          const auto& t = rule["transform"];
          if (!t.IsObject() || (t.HasMember("headers") && !t["headers"].IsObject()))
            return http_error(res, 400, "transform.headers: an object");
          if (t.HasMember("headers"))
            for (const auto& [name, value] : t["headers"].GetObject())
              if (!value.IsString()) return http_error(res, 400, "transform.headers: string values");
        }
      }
    }
    state_.network_bodies.push_back(req.body);
    res.status = 204;
  }

  void list(const httplib::Request& req, httplib::Response& res) {
    if (!admit("list", req, res)) return;
    auto filter = parse_filter(req.get_param_value("metadata"));
    state_.list_filters.push_back(filter);
    if (malformed("list", res, 200)) return;
    std::string states = req.has_param("state") ? req.get_param_value("state") : "running,paused";
    long limit = req.has_param("limit") ? std::stol(req.get_param_value("limit")) : 100;
    if (limit < 1 || limit > 100) return http_error(res, 400, "limit must be between 1 and 100");
    limit = std::min<long>(limit, state_.page_size);
    std::vector<const FakeSandbox*> matching;
    for (const auto& [id, sb] : state_.sandboxes) {
      bool ok = states.find(sb.state) != std::string::npos;
      for (const auto& [k, v] : filter) {
        auto it = sb.metadata.find(k);
        ok = ok && it != sb.metadata.end() && it->second == v;
      }
      if (ok) matching.push_back(&sb);
    }
    std::sort(matching.begin(), matching.end(), [](const FakeSandbox* a, const FakeSandbox* b) {
      return a->started_at != b->started_at ? a->started_at > b->started_at : a->id < b->id;
    });
    // The cursor is the position to continue from, opaque to clients.
    size_t begin = req.has_param("nextToken") ? std::stoul(req.get_param_value("nextToken")) : 0;
    rapidjson::StringBuffer b;
    Writer w(b);
    w.StartArray();
    size_t i = begin;
    for (; i < matching.size() && i < begin + static_cast<size_t>(limit); ++i) write_listed(w, *matching[i], false, "");
    w.EndArray();
    if (i < matching.size()) res.set_header("X-Next-Token", std::to_string(i));
    res.set_content(b.GetString(), "application/json");
  }

 private:
  State& state_;
};

// The reset_route fault: the headers promise the whole body, half of it goes out, then the
// connection drops (with a TCP RST when `rst`), as when a proxy or the network breaks
// mid-answer.
void cut_body(const httplib::Request& req, httplib::Response& res, bool rst) {
  auto half = std::make_shared<std::string>(res.body.substr(0, res.body.size() / 2));
  const std::string type = res.get_header_value("Content-Type");
  const size_t size = std::max<size_t>(res.body.size(), 2);
  res.body.clear();
  const int local_port = req.local_port, peer_port = req.remote_port;
  res.set_content_provider(size, type, [=](size_t, size_t, httplib::DataSink& sink) {
    if (!half->empty()) sink.write(half->data(), half->size());
    if (rst) reset_connection(local_port, peer_port);
    return false;  // abort: the client never gets the rest
  });
}

}  // namespace

void register_control_plane(httplib::Server& server, State& state) {
  auto api = std::make_shared<Api>(state);
  auto locked = [api, &state](const std::string& route, void (Api::*fn)(const httplib::Request&, httplib::Response&)) {
    return [api, &state, route, fn](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock lock(state.mutex());
      state.hold(route, lock);
      ((*api).*fn)(req, res);
      state.delay(route, lock);
      if (state.faults.reset_route == route && state.faults.reset_times != 0) {
        if (state.faults.reset_times > 0) --state.faults.reset_times;
        cut_body(req, res, state.faults.reset_with_rst);
      }
    };
  };
  server.Post("/sandboxes", locked("create", &Api::create));
  // The official JS SDK (2.x) creates through POST /v2/sandboxes, which the pinned spec
  // does not list yet; same body and answer, accepted so that SDK can check this stand-in.
  server.Post("/v2/sandboxes", locked("create", &Api::create));
  server.Get("/v2/sandboxes", locked("list", &Api::list));
  server.Get(R"(/sandboxes/([A-Za-z0-9-]+))", locked("get", &Api::get));
  server.Delete(R"(/sandboxes/([A-Za-z0-9-]+))", locked("kill", &Api::kill));
  server.Post(R"(/sandboxes/([A-Za-z0-9-]+)/connect)", locked("connect", &Api::connect));
  server.Post(R"(/v2/sandboxes/([A-Za-z0-9-]+)/connect)", locked("connect", &Api::connect));  // JS SDK 2.x, as above
  server.Post(R"(/sandboxes/([A-Za-z0-9-]+)/timeout)", locked("timeout", &Api::set_timeout));
  server.Post(R"(/sandboxes/([A-Za-z0-9-]+)/pause)", locked("pause", &Api::pause));
  server.Put(R"(/sandboxes/([A-Za-z0-9-]+)/network)", locked("network", &Api::set_network));
  server.Post(R"(/sandboxes/([A-Za-z0-9-]+)/fork)", locked("fork", &Api::fork));
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
}

}  // namespace corral::e2b::standin
