#include "plugin_harness.hpp"

#include <dlfcn.h>

#include <stdexcept>

#include "corral/json.hpp"

namespace corral::test {
namespace {

struct CallState {
  PluginCall call;
  std::function<bool()> cancelled;
};

const corral_host_v1* host_table() {
  static const corral_host_v1 host = [] {
    corral_host_v1 h{};
    h.struct_size = sizeof(corral_host_v1);
    h.result = [](void* c, const char* json, size_t len) { static_cast<CallState*>(c)->call.result.assign(json, len); };
    h.error = [](void* c, int code, const char* message, const char* hint) {
      auto& call = static_cast<CallState*>(c)->call;
      call.code = code;
      call.message = message ? message : "";
      call.hint = hint ? hint : "";
    };
    h.emit = [](void* c, int stream, const char* data, size_t len) {
      auto& call = static_cast<CallState*>(c)->call;
      (stream == CORRAL_STDERR ? call.err : call.out).append(data, len);
    };
    h.cancelled = [](void* c) -> int {
      auto* s = static_cast<CallState*>(c);
      return s->cancelled && s->cancelled() ? 1 : 0;
    };
    h.log = [](void* c, int level, const char* message) {
      if (level == CORRAL_LOG_WARN) static_cast<CallState*>(c)->call.warnings.push_back(message);
    };
    h.progress = [](void* c, const char* message) { static_cast<CallState*>(c)->call.progress.push_back(message); };
    return h;
  }();
  return &host;
}

const corral_plugin_v1* load(const std::string& library, void** handle) {
  *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!*handle) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto entry = reinterpret_cast<corral_plugin_entry_v1_fn>(dlsym(*handle, CORRAL_PLUGIN_ENTRY_SYMBOL));
  if (!entry) throw std::runtime_error("no entry point in " + library);
  return entry();
}

// {"options": defaults from the spec, overridden by `options`}.
std::string config_json(const corral_plugin_v1& d, const std::map<std::string, std::string>& options) {
  ProviderSpec spec = json::spec_from_json(d.spec_json);
  StringMap values;
  for (const OptionSpec& o : spec.options)
    if (o.default_value) values[o.name] = *o.default_value;
  for (const auto& [k, v] : options) values[k] = v;
  rapidjson::StringBuffer b;
  json::Writer w(b);
  w.StartObject();
  json::write_map(w, "options", values);
  w.EndObject();
  return b.GetString();
}

}  // namespace

PluginHarness::PluginHarness(const std::string& library, const std::map<std::string, std::string>& options) {
  descriptor_ = load(library, &handle_);
  CallState state;
  instance_ = descriptor_->open(config_json(*descriptor_, options).c_str(), host_table(), &state);
  if (!instance_) throw std::runtime_error("open failed: " + state.call.message);
}

PluginHarness::~PluginHarness() {
  if (instance_) descriptor_->close(instance_);
  // The library stays loaded: unloading while libcurl/OpenSSL keep global state is unsafe.
}

PluginCall PluginHarness::call(corral_call_fn fn, const std::string& request, std::function<bool()> cancelled) {
  if (!fn) throw std::runtime_error("primitive not provided");
  CallState state;
  state.cancelled = std::move(cancelled);
  state.call.ok = fn(instance_, request.c_str(), host_table(), &state) == 0;
  return state.call;
}

PluginCall PluginHarness::try_open(const std::string& library, const std::map<std::string, std::string>& options) {
  void* handle = nullptr;
  const corral_plugin_v1* d = load(library, &handle);
  CallState state;
  void* instance = d->open(config_json(*d, options).c_str(), host_table(), &state);
  state.call.ok = instance != nullptr;
  if (instance) d->close(instance);
  return state.call;
}

}  // namespace corral::test
