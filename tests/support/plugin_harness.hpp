// Drives a provider plugin through its C ABI the way core does (dlopen, descriptor,
// host callbacks), so a plugin can be tested without the CLI.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "corral/plugin_abi.h"

namespace corral::test {

struct PluginCall {
  bool ok = false;
  std::string result;  // JSON result on success
  int code = 0;        // corral_error_code on failure
  std::string message;
  std::string hint;
  std::string out;  // emitted stdout
  std::string err;  // emitted stderr
  std::vector<std::string> warnings;
  std::vector<std::string> progress;
};

class PluginHarness {
 public:
  // Loads `library` and opens an instance with `options` on top of the spec's defaults.
  // Throws std::runtime_error when loading or open() fails (open's message included).
  PluginHarness(const std::string& library, const std::map<std::string, std::string>& options);
  ~PluginHarness();
  PluginHarness(const PluginHarness&) = delete;
  PluginHarness& operator=(const PluginHarness&) = delete;

  const corral_plugin_v1& descriptor() const { return *descriptor_; }
  // Calls primitive `fn` with `request`; `cancelled` is polled through the host table.
  PluginCall call(corral_call_fn fn, const std::string& request, std::function<bool()> cancelled = {});

  // open() alone, for testing option validation: the error, or "" when it succeeded.
  static PluginCall try_open(const std::string& library, const std::map<std::string, std::string>& options);

 private:
  void* handle_ = nullptr;
  const corral_plugin_v1* descriptor_ = nullptr;
  void* instance_ = nullptr;
};

}  // namespace corral::test
