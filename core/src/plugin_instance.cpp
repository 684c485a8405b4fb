#include "plugin_instance.hpp"

#include <fmt/format.h>

#include "crash_guard.hpp"

namespace corral {

std::string_view to_string(Isolation isolation) {
  return isolation == Isolation::process ? "process" : "in-process";
}

std::string crash_message(std::string_view plugin, std::string_view primitive, std::string_view cause) {
  return fmt::format("provider plugin '{}' crashed during '{}' ({})", plugin, primitive, cause);
}

std::string crash_hint(std::string_view lease) {
  if (lease.empty())
    return "report it to the plugin's authors; once the plugin is fixed, `corral list` shows what it left, and "
           "`corral stop --id LEASE` or `corral stop --orphans` removes it";
  return fmt::format("the lease's claim is kept: `corral stop --id {}` cleans up once the plugin is fixed; "
                     "report it to the plugin's authors",
                     lease);
}

namespace {

class InProcess final : public PluginInstance {
 public:
  explicit InProcess(std::shared_ptr<const Plugin> plugin) : plugin_(std::move(plugin)) {}
  ~InProcess() override {
    if (instance_) plugin_->table().close(instance_);
  }
  const ProviderSpec& spec() const override { return plugin_->spec(); }
  bool provides(std::string_view name) const override { return corral::provides(plugin_->table(), name); }

  bool open(const std::string& config, const corral_host_v1& host, void* call) override {
    CrashGuard guard(what("open"), crash_hint(""));
    instance_ = plugin_->table().open(config.c_str(), &host, call);
    return instance_ != nullptr;
  }

  int call(const CallSite& site, const std::string& request, const corral_host_v1& host, void* call) override {
    corral_call_fn fn = call_primitive(plugin_->table(), site.primitive);
    CrashGuard guard(what(site.primitive), crash_hint(site.lease));
    return fn(instance_, request.c_str(), &host, call);
  }

 private:
  // The crash message with a slot for the cause the guard learns at the crash.
  std::string what(const char* primitive) const {
    return crash_message(spec().name, primitive, std::string(1, CrashGuard::kCause));
  }

  std::shared_ptr<const Plugin> plugin_;
  void* instance_ = nullptr;
};

}  // namespace

std::unique_ptr<PluginInstance> in_process_instance(std::shared_ptr<const Plugin> plugin) {
  return std::make_unique<InProcess>(std::move(plugin));
}

}  // namespace corral
