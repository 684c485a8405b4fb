#include "plugin_fixture.hpp"

#include <doctest/doctest.h>

#include "cli.hpp"
#include "corral/os/process.hpp"
#include "corral/wire.hpp"

namespace corral::test {

DaytonaPlugin::DaytonaPlugin(const std::map<std::string, std::string>& options) {
  std::map<std::string, std::string> all = options;
  all["api-key"] = server.api_key();
  all["api-url"] = server.api_url();
  plugin = std::make_unique<PluginHarness>(CORRAL_DAYTONA_PLUGIN, all);
}

daytona::standin::FakeSandbox DaytonaPlugin::sandbox(const std::string& id) {
  return server.with([&](auto& st) { return st.sandboxes.at(id); });
}

Sandbox ready(DaytonaPlugin& fx, const std::map<std::string, std::string>& files, const std::string& lease) {
  CreateRequest r{.lease_id = lease,
                  .slug = "calm-otter",
                  .labels = {{"corral-owner", "corral"}, {"corral-lease", lease}}};
  PluginCall c = fx.plugin->call(fx.d().create, wire::to_json(r));
  INFO(c.message);
  REQUIRE(c.ok);
  Sandbox sb = wire::read<Sandbox>(c.result, "sandbox");
  TempDir src, tmp;
  for (const auto& [p, content] : files) src.write(p, content);
  const std::string archive = (tmp.path() / "ws.tar.gz").string();
  os::ProcessSpec tar;
  tar.argv = {"tar", "-czf", archive, "-C", src.str(), "."};
  REQUIRE(os::capture_process(tar, 30).exit_code == 0);
  PluginCall up = fx.plugin->call(fx.d().upload, wire::to_json(wire::UploadCall{sb, {archive, 100, {}}}));
  INFO(up.message);
  REQUIRE(up.ok);
  return sb;
}

PluginCall call_on(DaytonaPlugin& fx, corral_call_fn fn, const Sandbox& sandbox) {
  return fx.plugin->call(fn, wire::to_json(wire::SandboxRequest{sandbox}));
}

PluginCall run_shell(DaytonaPlugin& fx, const Sandbox& sandbox, const std::string& shell) {
  Command command;
  command.shell = shell;
  return fx.plugin->call(fx.d().exec, wire::to_json(wire::ExecRequest{sandbox, command}));
}

}  // namespace corral::test
