// The seam between ProviderSession and a plugin's code: an opened plugin instance, either
// loaded into corral (in-process) or living in a helper process (isolation: process).
// Both speak the C ABI's calls and host callbacks, so ProviderSession alone turns JSON
// into types, redacts and maps errors, whichever way the plugin runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "corral/plugin_abi.h"
#include "corral/types.hpp"
#include "plugin_host/loader.hpp"

namespace corral {

enum class Isolation { in_process, process };
// "in-process" or "process", as registries write it.
std::string_view to_string(Isolation isolation);

// How a registry entry asks its plugin to run (registry keys isolation, call-timeout,
// cancel-grace). call-timeout binds only an isolated plugin, which corral can kill;
// cancel-grace binds both: an in-process plugin past it costs corral's process.
struct IsolationSettings {
  Isolation mode = Isolation::in_process;
  // How long a primitive that primitives.def binds by call-timeout (every one but those
  // that last as long as the user's work) may take before it counts as hung.
  std::chrono::milliseconds call_timeout{std::chrono::minutes(10)};
  // How long a call may go on after it was told to stop (Ctrl-C, or exec's --timeout).
  std::chrono::milliseconds cancel_grace{std::chrono::seconds(30)};
};

// Why a call was told to stop: the user's Ctrl-C, or the command's --timeout.
enum class StopReason { none, interrupted, timed_out };

// What a call is, for limits and for the words of a crash report.
struct CallSite {
  const char* primitive;  // a primitive's name ("exec"), or the step before any: "load", "open"
  std::string lease;  // the lease whose claim outlives a crash of this call, "" when none
  std::int64_t command_timeout = 0;  // exec's --timeout in seconds, 0 = none
  // Whether, and why, the call has been told to stop; asked from any thread. Empty for a
  // call nothing stops (cleanup).
  std::function<StopReason()> stop;
};

class PluginInstance {
 public:
  virtual ~PluginInstance() = default;  // closes the instance, if it was opened
  virtual const ProviderSpec& spec() const = 0;
  // True when the plugin provides primitive `p`.
  virtual bool provides(Primitive p) const = 0;
  // The ABI's open: true when the instance was created, false after host.error.
  // Throws corral::Error when the plugin crashed or hung doing it.
  virtual bool open(const std::string& config, const corral_host_v1& host, void* call) = 0;
  // The ABI's primitive call: 0, or non-zero after host.error. Throws corral::Error when
  // the plugin crashed or hung doing it.
  virtual int call(const CallSite& site, const std::string& request, const corral_host_v1& host, void* call) = 0;
};

// A plugin loaded into this process: today's behaviour, with a crash reported in one
// clear line before corral dies of it (crash_guard.hpp). A call still running
// `settings.cancel_grace` after it was told to stop cannot be stopped from outside: corral
// says so (outlived_message) and exits 130 or 124 without cleaning up.
std::unique_ptr<PluginInstance> in_process_instance(std::shared_ptr<const Plugin> plugin,
                                                    const IsolationSettings& settings = {});

// The words every report of a plugin that went on after it was told to stop carries.
inline constexpr std::string_view kIgnoredCancellation = "ignored cancellation";
// "provider plugin 'NAME' ignored cancellation: 'exec' was still running 2 s after
// Ctrl-C": a call that outlived the grace it had after it was told to stop.
std::string outlived_message(std::string_view plugin, const CallSite& site, StopReason why,
                             std::chrono::milliseconds grace);
// The exit status and error code a call stopped for `why` gives the run.
ErrorCode stop_error_code(StopReason why);

// What to do after a crash, knowing the lease the call worked for ("" = none).
std::string crash_hint(std::string_view lease);

}  // namespace corral
