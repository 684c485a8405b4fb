// The daytona plugin loaded through its C ABI (as corral loads it) against a stand-in
// Daytona of its own, and the steps plugin-level tests share.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "corral/types.hpp"
#include "plugin_harness.hpp"
#include "server.hpp"

namespace corral::test {

struct DaytonaPlugin {
  daytona::standin::StandIn server;
  std::unique_ptr<PluginHarness> plugin;
  // `options` on top of the stand-in's key and URL.
  explicit DaytonaPlugin(const std::map<std::string, std::string>& options = {});
  const corral_plugin_v1& d() const { return plugin->descriptor(); }
  int toolbox_calls(const std::string& route) { return server.calls("toolbox " + route); }
  // The stand-in's record of sandbox `id` (it must exist).
  daytona::standin::FakeSandbox sandbox(const std::string& id);
};

// A new sandbox for lease `lease` whose workspace holds `files` (relative path ->
// content), synced as core does.
Sandbox ready(DaytonaPlugin& fx, const std::map<std::string, std::string>& files, const std::string& lease = "lease-1");

// Calls primitive `fn` (pause, resume, get's id aside, destroy) with the sandbox alone.
PluginCall call_on(DaytonaPlugin& fx, corral_call_fn fn, const Sandbox& sandbox);

// Runs `shell` in the sandbox's workspace; its stdout, or the failure's message.
PluginCall run_shell(DaytonaPlugin& fx, const Sandbox& sandbox, const std::string& shell);

}  // namespace corral::test
