#include "plugin_host/plugin_instance.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "corral/sdk.hpp"
#include "plugin_host/crash_guard.hpp"

namespace corral {

std::string_view to_string(Isolation isolation) {
  return isolation == Isolation::process ? "process" : "in-process";
}

std::string outlived_message(std::string_view plugin, const CallSite& site, StopReason why,
                             std::chrono::milliseconds grace) {
  const std::string after = why == StopReason::timed_out
                                ? fmt::format("the command's --timeout ({})", format_duration(site.command_timeout))
                                : std::string("Ctrl-C");
  return fmt::format("provider plugin '{}' {}: '{}' was still running {:g} s after {}", plugin,
                     kIgnoredCancellation, site.primitive, static_cast<double>(grace.count()) / 1000, after);
}

ErrorCode stop_error_code(StopReason why) {
  return why == StopReason::timed_out ? ErrorCode::timeout : ErrorCode::cancelled;
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

// Watches a call in progress on a thread of its own: once `stop` says the call was told
// to stop and it is still running `grace` later, `outlived` is called there (and must not
// return). An empty `stop`: nothing to watch.
class Watchdog {
 public:
  Watchdog(std::function<StopReason()> stop, std::chrono::milliseconds grace,
           std::function<void(StopReason)> outlived) {
    if (stop)
      thread_ = std::thread([this, stop = std::move(stop), grace, outlived = std::move(outlived)] {
        watch(stop, grace, outlived);
      });
  }
  // The call returned: stop watching.
  ~Watchdog() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch(const std::function<StopReason()>& stop, std::chrono::milliseconds grace,
             const std::function<void(StopReason)>& outlived) {
    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> told;
    StopReason why = StopReason::none;
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return done_; })) {
      if (!told) {
        why = stop();
        if (why != StopReason::none) told = Clock::now();
      } else if (Clock::now() - *told >= grace) {
        lock.unlock();
        outlived(why);
        return;
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// Says on stderr that an in-process call outlived its grace, and ends corral with the
// status of what stopped it: the call holds this process, so nothing can be cleaned up.
[[noreturn]] void abandon(std::string_view plugin, const CallSite& site, StopReason why,
                          std::chrono::milliseconds grace) {
  const std::string text = fmt::format(
      "\ncorral: error: {}; it runs inside corral's process (isolation: in-process), which cannot stop it, so "
      "corral exits without cleaning up\n  hint: {}; with `isolation: process` in its registry entry corral stops "
      "such a plugin and cleans up\n",
      outlived_message(plugin, site, why, grace), crash_hint(site.lease));
  (void)!::write(2, text.data(), text.size());
  std::_Exit(exit_code_for(stop_error_code(why)));
}

class InProcess final : public PluginInstance {
 public:
  InProcess(std::shared_ptr<const Plugin> plugin, const IsolationSettings& settings)
      : plugin_(std::move(plugin)), grace_(settings.cancel_grace) {}
  ~InProcess() override {
    if (instance_) plugin_->table().close(instance_);
  }
  const ProviderSpec& spec() const override { return plugin_->spec(); }
  bool provides(Primitive p) const override { return primitive_entry(plugin_->table(), p) != nullptr; }

  bool open(const std::string& config, const corral_host_v1& host, void* call) override {
    CrashGuard guard(what("open"), crash_hint(""));
    instance_ = plugin_->table().open(config.c_str(), &host, call);
    return instance_ != nullptr;
  }

  int call(const CallSite& site, const std::string& request, const corral_host_v1& host, void* call) override {
    const std::optional<Primitive> primitive = primitive_named(site.primitive);
    corral_call_fn fn = primitive ? primitive_entry(plugin_->table(), *primitive) : nullptr;
    if (!fn)
      throw Error(ErrorCode::internal,
                  fmt::format("provider '{}' has no primitive '{}' to call", spec().name, site.primitive));
    CrashGuard guard(what(site.primitive), crash_hint(site.lease));
    // Not create: a sandbox made after corral gave up would have no claim. The run
    // destroys it once create returns.
    const bool watched = primitive != Primitive::create;
    Watchdog watchdog(watched ? site.stop : nullptr, grace_,
                      [&](StopReason why) { abandon(spec().name, site, why, grace_); });
    return fn(instance_, request.c_str(), &host, call);
  }

 private:
  // The crash message with a slot for the cause the guard learns at the crash.
  std::string what(const char* primitive) const {
    return sdk::crash_message(spec().name, primitive, std::string(1, CrashGuard::kCause));
  }

  std::shared_ptr<const Plugin> plugin_;
  std::chrono::milliseconds grace_;
  void* instance_ = nullptr;
};

}  // namespace

std::unique_ptr<PluginInstance> in_process_instance(std::shared_ptr<const Plugin> plugin,
                                                    const IsolationSettings& settings) {
  return std::make_unique<InProcess>(std::move(plugin), settings);
}

}  // namespace corral
