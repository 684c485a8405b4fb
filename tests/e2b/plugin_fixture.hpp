// A stand-in E2B plus the e2b plugin opened against it, for plugin-level tests.
#pragma once

#include "corral/wire.hpp"

#include <map>
#include <memory>
#include <string>

#include "cli.hpp"
#include "corral/json.hpp"
#include "plugin_harness.hpp"
#include "server.hpp"

namespace corral::test {

using Opts = std::map<std::string, std::string>;

struct E2bFixture {
  e2b::standin::StandIn server;
  std::unique_ptr<PluginHarness> plugin;

  explicit E2bFixture(std::map<std::string, std::string> options = {}) { open(std::move(options)); }

  // (Re)opens the plugin with the stand-in's URLs and key plus `options`.
  void open(std::map<std::string, std::string> options) {
    options.emplace("api-key", server.api_key());
    options.emplace("api-url", server.api_url());
    options.emplace("sandbox-url", server.sandbox_url());
    plugin = std::make_unique<PluginHarness>(CORRAL_E2B_PLUGIN, options);
  }
  const corral_plugin_v1& d() const { return plugin->descriptor(); }
};

// The sandbox a primitive answered with.
inline Sandbox sandbox_of(const std::string& sandbox_json) { return wire::read<Sandbox>(sandbox_json, "sandbox"); }

// The request JSON of primitives that take only a sandbox (destroy, pause, resume).
inline std::string with_sandbox(const std::string& sandbox_json) {
  return wire::to_json(wire::SandboxRequest{sandbox_of(sandbox_json)});
}

}  // namespace corral::test
