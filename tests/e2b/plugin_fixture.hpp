// A stand-in E2B plus the e2b plugin opened against it, for plugin-level tests.
#pragma once

#include <doctest/doctest.h>

#include "corral/os/process.hpp"
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

// Creates a sandbox for `lease` as core does (owner, lease and slug labels); its JSON.
inline std::string create(E2bFixture& fx, const std::string& lease = "lease-1", const std::string& slug = "calm-otter") {
  CreateRequest r{.lease_id = lease,
                  .slug = slug,
                  .labels = {{"corral-owner", "corral"}, {"corral-lease", lease}, {"corral-slug", slug}}};
  PluginCall c = fx.plugin->call(fx.d().create, wire::to_json(r));
  INFO(c.message);
  REQUIRE(c.ok);
  return c.result;
}

// The ID of a sandbox JSON.
inline std::string id_of(const std::string& sandbox_json) { return json::get_string(json::parse(sandbox_json, "t"), "id"); }

// The exec request JSON running `c` in `sandbox`.
inline std::string exec_request(const std::string& sandbox, Command c) {
  return wire::to_json(wire::ExecRequest{sandbox_of(sandbox), std::move(c)});
}

// A shell command run from `cwd` (workspace-relative), bounded by `timeout` seconds (0 = none).
inline Command shell(const std::string& script, const std::string& cwd = "", std::int64_t timeout = 0) {
  Command c;
  c.shell = script;
  c.cwd = cwd;
  c.timeout_seconds = timeout;
  return c;
}

// The exit code an exec answered with.
inline int exit_code(const PluginCall& c) { return static_cast<int>(json::get_int(json::parse(c.result, "t"), "exitCode", -1)); }

// A .tar.gz of `files` (relative path -> content), made by the system tar like core's archive.
inline std::string archive(const TempDir& dir, const std::map<std::string, std::string>& files) {
  TempDir src;
  for (const auto& [p, content] : files) src.write(p, content);
  std::string out = (dir.path() / "ws.tar.gz").string();
  os::ProcessSpec spec;
  spec.argv = {"tar", "-czf", out, "-C", src.str(), "."};
  REQUIRE(os::capture_process(spec, 30).exit_code == 0);
  return out;
}

// Uploads the archive at `path` into `sandbox`.
inline PluginCall upload(E2bFixture& fx, const std::string& sandbox, const std::string& path) {
  return fx.plugin->call(fx.d().upload, wire::to_json(wire::UploadCall{sandbox_of(sandbox), {path, 100, {}}}));
}

// A sandbox with a synced workspace (a workdir to run in), as core leaves it before exec.
inline std::string ready(E2bFixture& fx, const std::string& lease = "lease-1") {
  std::string sb = create(fx, lease);
  TempDir tmp;
  PluginCall up = upload(fx, sb, archive(tmp, {{"README", "workspace\n"}}));
  INFO(up.message);
  REQUIRE(up.ok);
  return sb;
}

}  // namespace corral::test
