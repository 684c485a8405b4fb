#include "provider_session.hpp"

#include <fmt/format.h>

#include <optional>

#include "corral/wire.hpp"

namespace corral {
namespace {

struct CallState {
  const HostHooks* hooks;
  const Redactor* redactor;
  bool cancellable = true;  // false while cleaning up after the Ctrl-C that caused it
  std::string result;
  std::optional<Error> error;
};

CallState& state(void* call) { return *static_cast<CallState*>(call); }

const corral_host_v1 kHost = {
    sizeof(corral_host_v1),
    /*result=*/[](void* call, const char* json, size_t len) { state(call).result.assign(json, len); },
    /*error=*/
    [](void* call, int code, const char* message, const char* hint) {
      CallState& s = state(call);
      s.error.emplace(error_code_from_abi(code), s.redactor->apply(message ? message : "unknown error"),
                      s.redactor->apply(hint ? hint : ""));
    },
    /*emit=*/
    [](void* call, int stream, const char* data, size_t len) {
      const HostHooks& h = *state(call).hooks;
      if (h.emit) h.emit(stream, std::string_view(data, len));
    },
    /*cancelled=*/
    [](void* call) -> int {
      CallState& s = state(call);
      return s.cancellable && s.hooks->cancelled && s.hooks->cancelled() ? 1 : 0;
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

}  // namespace

ProviderSession::ProviderSession(std::unique_ptr<PluginInstance> plugin, const StringMap& options, HostHooks hooks)
    : plugin_(std::move(plugin)), hooks_(std::move(hooks)) {
  for (const OptionSpec& o : plugin_->spec().options)
    if (o.secret)
      if (auto it = options.find(o.name); it != options.end()) redactor_.add(it->second);
  CallState s{&hooks_, &redactor_};
  const std::string config = wire::to_json(wire::OpenRequest{options});
  if (!plugin_->open(config, kHost, &s)) {
    if (s.error) throw *s.error;
    throw Error(ErrorCode::internal, fmt::format("provider '{}' failed to start", spec().name));
  }
}

ProviderSession::ProviderSession(std::shared_ptr<const Plugin> plugin, const StringMap& options, HostHooks hooks)
    : ProviderSession(in_process_instance(std::move(plugin)), options, std::move(hooks)) {}

ProviderSession::~ProviderSession() = default;

std::string ProviderSession::call(const CallSite& site, const std::string& request, bool cancellable) {
  if (!plugin_->provides(site.primitive))
    throw Error(ErrorCode::unsupported,
                fmt::format("provider '{}' does not support '{}'", spec().name, site.primitive));
  CallState s{&hooks_, &redactor_, cancellable};
  int rc = plugin_->call(site, request, kHost, &s);
  if (rc != 0) {
    if (s.error) throw *s.error;
    throw Error(ErrorCode::internal,
                fmt::format("provider '{}' failed in '{}' without saying why", spec().name, site.primitive));
  }
  return s.result.empty() ? "{}" : s.result;
}

std::string ProviderSession::lease_of(const Sandbox& sandbox) const {
  if (auto it = sandbox.labels.find(wire::kLeaseLabel); it != sandbox.labels.end()) return it->second;
  return sandbox.id == created_.first ? created_.second : "";
}

template <class Result>
Result ProviderSession::answer(const std::string& text, const char* primitive) {
  try {
    return wire::read<Result>(text, fmt::format("the answer of provider '{}' to '{}'", spec().name, primitive));
  } catch (const Error& e) {
    throw Error(ErrorCode::internal, redactor_.apply(e.what()),
                "this is a bug in the provider plugin; report it to its authors");
  }
}

Sandbox ProviderSession::remember(Sandbox sandbox) {
  for (const auto& [k, v] : sandbox.secrets) redactor_.add(v);
  return sandbox;
}

std::vector<DoctorCheck> ProviderSession::doctor() {
  auto result = answer<wire::DoctorResult>(call({"doctor"}, "{}"), "doctor");
  for (DoctorCheck& c : result.checks) {
    c.detail = redactor_.apply(c.detail);
    c.hint = redactor_.apply(c.hint);
  }
  return result.checks;
}

Sandbox ProviderSession::create(const CreateRequest& request) {
  Sandbox sandbox = remember(answer<Sandbox>(call({"create"}, wire::to_json(request)), "create"));
  if (sandbox.id.empty())
    throw Error(ErrorCode::internal, fmt::format("provider '{}' created a sandbox without an id", spec().name),
                "this is a bug in the provider plugin; report it to its authors");
  created_ = {sandbox.id, request.lease_id};
  return sandbox;
}

Sandbox ProviderSession::get(const std::string& id, const std::string& lease) {
  return remember(answer<Sandbox>(call({"get", lease}, wire::to_json(wire::GetRequest{id})), "get"));
}

std::vector<Sandbox> ProviderSession::list(const StringMap& labels) {
  return answer<wire::ListResult>(call({"list"}, wire::to_json(wire::ListRequest{labels})), "list").sandboxes;
}

void ProviderSession::destroy(const Sandbox& sandbox) {
  // Destroying is cleanup: it runs after the Ctrl-C that asked for it and is never cut short by it.
  call({"destroy", lease_of(sandbox)}, wire::to_json(wire::SandboxRequest{sandbox}), /*cancellable=*/false);
}

int ProviderSession::exec(const Sandbox& sandbox, const Command& command) {
  return answer<ExecResult>(call({"exec", lease_of(sandbox), command.timeout_seconds},
                                 wire::to_json(wire::ExecRequest{sandbox, command})),
                            "exec")
      .exit_code;
}

void ProviderSession::upload(const Sandbox& sandbox, const UploadRequest& request) {
  call({"upload", lease_of(sandbox)}, wire::to_json(wire::UploadCall{sandbox, request}));
}

Sandbox ProviderSession::extend(const Sandbox& sandbox, std::int64_t seconds) {
  return remember(answer<Sandbox>(
      call({"extend", lease_of(sandbox)}, wire::to_json(wire::ExtendRequest{sandbox, seconds})), "extend"));
}

std::string ProviderSession::url(const Sandbox& sandbox, int port) {
  return answer<wire::UrlResult>(call({"url", lease_of(sandbox)}, wire::to_json(wire::UrlRequest{sandbox, port})),
                                 "url")
      .url;
}

DownloadResult ProviderSession::download(const Sandbox& sandbox, const DownloadRequest& request) {
  return answer<DownloadResult>(
      call({"download", lease_of(sandbox)}, wire::to_json(wire::DownloadCall{sandbox, request})), "download");
}

}  // namespace corral
