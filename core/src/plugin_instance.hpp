// The seam between ProviderSession and a plugin's code: an opened plugin instance, either
// loaded into corral (in-process) or living in a helper process (isolation: process).
// Both speak the C ABI's calls and host callbacks, so ProviderSession alone turns JSON
// into types, redacts and maps errors, whichever way the plugin runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "corral/plugin_abi.h"
#include "corral/types.hpp"
#include "loader.hpp"

namespace corral {

enum class Isolation { in_process, process };
// "in-process" or "process", as registries write it.
std::string_view to_string(Isolation isolation);

// How a registry entry asks its plugin to run (registry keys isolation, call-timeout,
// cancel-grace); the limits only bind an isolated plugin, which corral can kill.
struct IsolationSettings {
  Isolation mode = Isolation::in_process;
  // How long any primitive but exec and upload may take before it counts as hung.
  std::chrono::milliseconds call_timeout{std::chrono::minutes(10)};
  // How long a call may go on after it was told to stop (Ctrl-C, or exec's --timeout).
  std::chrono::milliseconds cancel_grace{std::chrono::seconds(30)};
};

// What a call is, for limits and for the words of a crash report.
struct CallSite {
  const char* primitive;           // "exec"
  std::string lease;  // the lease whose claim outlives a crash of this call, "" when none
  std::int64_t command_timeout = 0;  // exec's --timeout in seconds, 0 = none
};

class PluginInstance {
 public:
  virtual ~PluginInstance() = default;  // closes the instance, if it was opened
  virtual const ProviderSpec& spec() const = 0;
  // True when the plugin provides primitive `name` ("doctor", "exec", ...).
  virtual bool provides(std::string_view name) const = 0;
  // The ABI's open: true when the instance was created, false after host.error.
  // Throws corral::Error when the plugin crashed or hung doing it.
  virtual bool open(const std::string& config, const corral_host_v1& host, void* call) = 0;
  // The ABI's primitive call: 0, or non-zero after host.error. Throws corral::Error when
  // the plugin crashed or hung doing it.
  virtual int call(const CallSite& site, const std::string& request, const corral_host_v1& host, void* call) = 0;
};

// A plugin loaded into this process: today's behaviour, with a crash reported in one
// clear line before corral dies of it (crash_guard.hpp).
std::unique_ptr<PluginInstance> in_process_instance(std::shared_ptr<const Plugin> plugin);

// "provider plugin 'NAME' crashed during 'exec' (SIGSEGV)": the words of every crash report.
std::string crash_message(std::string_view plugin, std::string_view primitive, std::string_view cause);
// What to do after a crash, knowing the lease the call worked for ("" = none).
std::string crash_hint(std::string_view lease);

}  // namespace corral
