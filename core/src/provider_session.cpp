#include "provider_session.hpp"

#include <fmt/format.h>

#include <optional>

#include "corral/json.hpp"

namespace corral {
namespace {

struct CallState {
  const HostHooks* hooks;
  const Redactor* redactor;
  std::string result;
  std::optional<Error> error;
};

CallState& state(void* call) { return *static_cast<CallState*>(call); }

ErrorCode code_from_abi(int code) {
  if (code >= static_cast<int>(ErrorCode::internal) && code <= static_cast<int>(ErrorCode::unsupported))
    return static_cast<ErrorCode>(code);
  return ErrorCode::internal;
}

const corral_host_v1 kHost = {
    sizeof(corral_host_v1),
    /*result=*/[](void* call, const char* json, size_t len) { state(call).result.assign(json, len); },
    /*error=*/
    [](void* call, int code, const char* message, const char* hint) {
      CallState& s = state(call);
      s.error.emplace(code_from_abi(code), s.redactor->apply(message ? message : "unknown error"),
                      s.redactor->apply(hint ? hint : ""));
    },
    /*emit=*/
    [](void* call, int stream, const char* data, size_t len) {
      const HostHooks& h = *state(call).hooks;
      if (h.emit) h.emit(stream, std::string_view(data, len));
    },
    /*cancelled=*/
    [](void* call) -> int {
      const HostHooks& h = *state(call).hooks;
      return h.cancelled && h.cancelled() ? 1 : 0;
    },
    /*log=*/
    [](void* call, int level, const char* message) {
      CallState& s = state(call);
      if (s.hooks->log) s.hooks->log(level, s.redactor->apply(message ? message : ""));
    },
    /*progress=*/
    [](void* call, const char* message) {
      CallState& s = state(call);
      if (s.hooks->progress) s.hooks->progress(s.redactor->apply(message ? message : ""));
    },
};

std::string sandbox_request(const Sandbox& sandbox, const std::function<void(json::Writer&)>& more = {}) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("sandbox");
  json::write_sandbox(w, sandbox, /*include_secrets=*/true);
  if (more) more(w);
  w.EndObject();
  return buffer.GetString();
}

}  // namespace

ProviderSession::ProviderSession(std::shared_ptr<const Plugin> plugin, const StringMap& options, HostHooks hooks)
    : plugin_(std::move(plugin)), hooks_(std::move(hooks)) {
  for (const OptionSpec& o : plugin_->spec().options)
    if (o.secret)
      if (auto it = options.find(o.name); it != options.end()) redactor_.add(it->second);
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_map(w, "options", options);
  w.EndObject();
  CallState s{&hooks_, &redactor_, {}, {}};
  instance_ = plugin_->table().open(buffer.GetString(), &kHost, &s);
  if (!instance_) {
    if (s.error) throw *s.error;
    throw Error(ErrorCode::internal, fmt::format("provider '{}' failed to start", spec().name));
  }
}

ProviderSession::~ProviderSession() {
  if (instance_) plugin_->table().close(instance_);
}

std::string ProviderSession::call(corral_call_fn fn, const char* name, const std::string& request) {
  if (!fn)
    throw Error(ErrorCode::unsupported, fmt::format("provider '{}' does not support '{}'", spec().name, name));
  CallState s{&hooks_, &redactor_, {}, {}};
  int rc = fn(instance_, request.c_str(), &kHost, &s);
  if (rc != 0) {
    if (s.error) throw *s.error;
    throw Error(ErrorCode::internal, fmt::format("provider '{}' failed in '{}' without saying why", spec().name, name));
  }
  return s.result.empty() ? "{}" : s.result;
}

Sandbox ProviderSession::remember(Sandbox sandbox) {
  for (const auto& [k, v] : sandbox.secrets) redactor_.add(v);
  return sandbox;
}

std::vector<DoctorCheck> ProviderSession::doctor() {
  json::Document doc = json::parse(call(plugin_->table().doctor, "doctor", "{}"), "doctor result");
  std::vector<DoctorCheck> checks;
  if (auto it = doc.FindMember("checks"); it != doc.MemberEnd() && it->value.IsArray())
    for (const auto& c : it->value.GetArray())
      checks.push_back({json::get_string(c, "name"), json::get_bool(c, "ok"), redactor_.apply(json::get_string(c, "detail")),
                        json::get_string(c, "hint")});
  return checks;
}

Sandbox ProviderSession::create(const CreateRequest& request) {
  auto doc = json::parse(call(plugin_->table().create, "create", json::to_json(request)), "create result");
  Sandbox sandbox = remember(json::sandbox_from(doc));
  if (sandbox.id.empty())
    throw Error(ErrorCode::internal, fmt::format("provider '{}' created a sandbox without an id", spec().name),
                "this is a bug in the provider plugin; report it to its authors");
  return sandbox;
}

Sandbox ProviderSession::get(const std::string& id) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "id", id);
  w.EndObject();
  auto doc = json::parse(call(plugin_->table().get, "get", buffer.GetString()), "get result");
  return remember(json::sandbox_from(doc));
}

std::vector<Sandbox> ProviderSession::list(const StringMap& labels) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_map(w, "labels", labels);
  w.EndObject();
  auto doc = json::parse(call(plugin_->table().list, "list", buffer.GetString()), "list result");
  std::vector<Sandbox> out;
  if (auto it = doc.FindMember("sandboxes"); it != doc.MemberEnd() && it->value.IsArray())
    for (const auto& s : it->value.GetArray()) out.push_back(json::sandbox_from(s));
  return out;
}

void ProviderSession::destroy(const Sandbox& sandbox) {
  call(plugin_->table().destroy, "destroy", sandbox_request(sandbox));
}

int ProviderSession::exec(const Sandbox& sandbox, const Command& command) {
  std::string request = sandbox_request(sandbox, [&](json::Writer& w) {
    w.Key("command");
    json::write_command(w, command);
  });
  auto doc = json::parse(call(plugin_->table().exec, "exec", request), "exec result");
  // A missing exit code must not read as success.
  if (!doc.IsObject() || !doc.HasMember("exitCode") || !doc["exitCode"].IsInt())
    throw Error(ErrorCode::internal, fmt::format("provider '{}' returned no exit code from exec", spec().name),
                "this is a bug in the provider plugin; report it to its authors");
  return doc["exitCode"].GetInt();
}

void ProviderSession::upload(const Sandbox& sandbox, const std::string& archive_path, std::uint64_t size) {
  call(plugin_->table().upload, "upload", sandbox_request(sandbox, [&](json::Writer& w) {
         json::write_string(w, "archive", archive_path);
         w.Key("size");
         w.Uint64(size);
       }));
}

Sandbox ProviderSession::extend(const Sandbox& sandbox, std::int64_t seconds) {
  auto doc = json::parse(call(plugin_->table().extend, "extend", sandbox_request(sandbox, [&](json::Writer& w) {
                           w.Key("seconds");
                           w.Int64(seconds);
                         })),
                         "extend result");
  return remember(json::sandbox_from(doc));
}

std::string ProviderSession::url(const Sandbox& sandbox, int port) {
  auto doc = json::parse(call(plugin_->table().url, "url", sandbox_request(sandbox, [&](json::Writer& w) {
                           w.Key("port");
                           w.Int(port);
                         })),
                         "url result");
  return json::get_string(doc, "url");
}

}  // namespace corral
