#include "egress_interceptor.hpp"

#include <dlfcn.h>

#include <mutex>

#include "corral/errors.hpp"
#include "corral/os/trusted_path.hpp"

namespace corral::local {
namespace {

Error unusable(const std::filesystem::path& module, const std::string& why) {
  return Error(ErrorCode::unavailable, "the local provider's TLS module " + module.string() + " cannot be used: " + why,
               "reinstall corral; --secret needs it, other runs do not");
}

// The module's interface, loaded once per process and never unloaded (OpenSSL's exit
// handlers live in it).
const corral_egress_tls_api* load_module(const std::filesystem::path& module) {
  static std::mutex mutex;
  static std::filesystem::path loaded;
  static const corral_egress_tls_api* api = nullptr;
  std::lock_guard lock(mutex);
  if (api && loaded == module) return api;
  const os::TrustCheck trust = os::check_trusted_path(module);
  if (trust.distrust) throw unusable(module, "it cannot be trusted: " + trust.distrust->describe());
  void* handle = ::dlopen(trust.resolved.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) throw unusable(module, ::dlerror());
  using Entry = const corral_egress_tls_api* (*)();
  const auto entry = reinterpret_cast<Entry>(::dlsym(handle, "corral_egress_tls_v1"));
  const corral_egress_tls_api* found = entry ? entry() : nullptr;
  if (!found) throw unusable(module, "it has no corral_egress_tls_v1 entry point");
  if (found->abi != CORRAL_EGRESS_TLS_ABI)
    throw unusable(module, "it speaks ABI " + std::to_string(found->abi) + ", this plugin " +
                               std::to_string(CORRAL_EGRESS_TLS_ABI));
  loaded = module;
  return api = found;
}

}  // namespace

std::shared_ptr<EgressInterceptor> EgressInterceptor::load(const std::filesystem::path& module,
                                                           const std::vector<Secret>& secrets,
                                                           const std::string& extra_ca_file) {
  const corral_egress_tls_api* api = load_module(module);
  std::vector<std::vector<const char*>> hosts;
  std::vector<corral_egress_secret> list;
  for (const Secret& s : secrets) {
    auto& h = hosts.emplace_back();
    for (const std::string& host : s.hosts) h.push_back(host.c_str());
  }
  for (size_t i = 0; i < secrets.size(); ++i)
    list.push_back({secrets[i].name.c_str(), hosts[i].data(), hosts[i].size(), secrets[i].placeholder.c_str(),
                    secrets[i].value.c_str()});
  int kind = 0;
  char* error = nullptr;
  corral_egress_tls* tls = api->open(list.data(), list.size(), extra_ca_file.c_str(), &kind, &error);
  if (!tls) {
    std::string why = error ? error : "unknown error";
    api->free_text(error);
    throw Error(kind == 1 ? ErrorCode::invalid_argument : ErrorCode::internal, why);
  }
  return std::shared_ptr<EgressInterceptor>(new EgressInterceptor(api, tls));
}

EgressInterceptor::EgressInterceptor(const corral_egress_tls_api* api, corral_egress_tls* tls)
    : api_(api), tls_(tls), ca_pem_(take(api->ca_pem(tls))) {}

EgressInterceptor::~EgressInterceptor() { api_->close(tls_); }

std::string EgressInterceptor::take(char* text) const {
  std::string out = text ? text : "";
  api_->free_text(text);
  return out;
}

bool EgressInterceptor::binds(const std::string& host) const { return api_->binds(tls_, host.c_str()) == 1; }

EgressInterceptor::Upstream EgressInterceptor::connect(const std::string& host, int upstream, int stop,
                                                       EgressClock::time_point deadline, std::string& why) const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - EgressClock::now()).count();
  char* reason = nullptr;
  Upstream up(api_->connect(tls_, host.c_str(), upstream, stop, std::max<long long>(left, 0), &reason),
              api_->free_upstream);
  if (!up) why = take(reason);
  else api_->free_text(reason);
  return up;
}

bool EgressInterceptor::serve(Upstream& up, const std::string& host, int client, const std::string& ahead,
                              int upstream, int stop, std::string& refused) const {
  char* why = nullptr;
  const int sent = api_->serve(tls_, up.get(), host.c_str(), client, ahead.data(), ahead.size(), upstream, stop, &why);
  refused = take(why);
  return sent == 1;
}

}  // namespace corral::local
