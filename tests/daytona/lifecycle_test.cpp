// The daytona plugin's pause and resume through its C ABI against the stand-in Daytona:
// a container sandbox is stopped (Daytona pauses only VM sandboxes) and a VM sandbox
// paused, both reported as paused and resumed with their files as they were; a sandbox
// that vanished and a start refused by quota fail with corral's codes.
#include <doctest/doctest.h>

#include "corral/json.hpp"
#include "corral/wire.hpp"
#include "plugin_fixture.hpp"

using namespace corral;
using namespace corral::test;

namespace {

Sandbox sandbox_of(const PluginCall& c) {
  INFO(c.message);
  REQUIRE(c.ok);
  return wire::read<Sandbox>(c.result, "sandbox");
}

std::string detail(const Sandbox& sb, const std::string& key) {
  auto it = sb.details.find(key);
  return it == sb.details.end() ? "" : it->second;
}

std::string stand_in_state(DaytonaPlugin& fx, const std::string& id) { return fx.sandbox(id).state; }

}  // namespace

TEST_CASE("daytona pause stops a container sandbox, reports it paused, and resume brings its files back") {
  DaytonaPlugin fx;
  Sandbox sb = ready(fx, {{"a.txt", "one\n"}});
  REQUIRE(run_shell(fx, sb, "echo made-here > b.txt").ok);

  Sandbox paused = sandbox_of(call_on(fx, fx.d().pause, sb));
  CHECK(paused.state == "paused");
  CHECK(detail(paused, "provider-state") == "stopped");
  CHECK(stand_in_state(fx, sb.id) == "stopped");
  CHECK(fx.server.calls("pause") == 0);  // a container cannot pause: Daytona would refuse
  CHECK(fx.server.calls("stop") == 1);

  SUBCASE("get and list say paused") {
    Sandbox got = sandbox_of(fx.plugin->call(fx.d().get, wire::to_json(wire::GetRequest{sb.id})));
    CHECK(got.state == "paused");
    CHECK(detail(got, "provider-state") == "stopped");
    PluginCall listed = fx.plugin->call(fx.d().list, wire::to_json(wire::ListRequest{{{"corral-lease", "lease-1"}}}));
    REQUIRE(listed.ok);
    auto found = wire::read<wire::ListResult>(listed.result, "list").sandboxes;
    REQUIRE(found.size() == 1);
    CHECK(found[0].state == "paused");
  }
  SUBCASE("pausing it again is not an error and calls nothing more") {
    CHECK(sandbox_of(call_on(fx, fx.d().pause, sb)).state == "paused");
    CHECK(fx.server.calls("stop") == 1);
  }
  SUBCASE("resume starts it, waits until started, and its files are as they were") {
    Sandbox resumed = sandbox_of(call_on(fx, fx.d().resume, sb));
    CHECK(resumed.state == "running");
    CHECK(stand_in_state(fx, sb.id) == "started");
    CHECK(fx.server.calls("start") == 1);
    PluginCall cat = run_shell(fx, sb, "cat a.txt b.txt");
    INFO(cat.message);
    CHECK(cat.ok);
    CHECK(cat.out == "one\nmade-here\n");
    SUBCASE("resuming a running sandbox is not an error") {
      CHECK(sandbox_of(call_on(fx, fx.d().resume, sb)).state == "running");
      CHECK(fx.server.calls("start") == 1);
    }
  }
}

TEST_CASE("daytona pause uses Daytona's pause for a VM sandbox and resume starts it again") {
  DaytonaPlugin fx(std::map<std::string, std::string>{{"snapshot", "daytona-vm-small"}});
  Sandbox sb = ready(fx, {{"a.txt", "one\n"}});
  Sandbox paused = sandbox_of(call_on(fx, fx.d().pause, sb));
  CHECK(paused.state == "paused");
  CHECK(detail(paused, "provider-state").empty());  // Daytona's word is corral's
  CHECK(stand_in_state(fx, sb.id) == "paused");
  CHECK(fx.server.calls("pause") == 1);
  CHECK(fx.server.calls("stop") == 0);
  CHECK(sandbox_of(call_on(fx, fx.d().resume, sb)).state == "running");
  PluginCall cat = run_shell(fx, sb, "cat a.txt");
  CHECK(cat.out == "one\n");
}

TEST_CASE("daytona pause of a sandbox that vanished fails as not found") {
  DaytonaPlugin fx;
  Sandbox sb = ready(fx, {{"a.txt", "one\n"}});
  SUBCASE("deleted before the call") {
    fx.server.with([&](auto& st) {
      st.remove(sb.id);
      return 0;
    });
  }
  SUBCASE("deleted between corral's look and its stop") {
    fx.server.with([](auto& st) { return st.faults.vanish_route = "stop"; });
  }
  PluginCall c = call_on(fx, fx.d().pause, sb);
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_NOT_FOUND);
  CHECK(c.message == "Daytona sandbox " + sb.id + " no longer exists");
  CHECK(c.hint.find("deleted, in the Daytona dashboard") != std::string::npos);
  CHECK(fx.server.sandbox_ids().empty());
}

TEST_CASE("daytona resume refused by the organization's quota fails with the quota code and Daytona's reason") {
  DaytonaPlugin fx;
  Sandbox sb = ready(fx, {{"a.txt", "one\n"}});
  REQUIRE(sandbox_of(call_on(fx, fx.d().pause, sb)).state == "paused");
  fx.server.with([](auto& st) {
    st.faults.quota_message = "Total CPU limit exceeded. Maximum allowed: 4";
    return st.faults.quota_route = "start";
  });
  PluginCall c = call_on(fx, fx.d().resume, sb);
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_QUOTA);
  CHECK(c.message.find("Total CPU limit exceeded") != std::string::npos);
  CHECK(c.hint.find("corral stop --id") != std::string::npos);
  CHECK(stand_in_state(fx, sb.id) == "stopped");  // left as it was
}

TEST_CASE("daytona --idle pause sets auto-pause on a VM sandbox and keeps auto-stop on a container; --idle stop keeps auto-stop") {
  std::map<std::string, std::string> options{{"auto-stop", "30"}};
  std::string idle = "pause";
  long stop_minutes = 0, pause_minutes = 30;
  bool warned = false;
  SUBCASE("pause, VM sandbox") { options["snapshot"] = "daytona-vm-small"; }
  SUBCASE("pause, container sandbox: Daytona cannot pause it") {
    stop_minutes = 30, pause_minutes = 0, warned = true;
  }
  SUBCASE("stop") {
    idle = "stop";
    stop_minutes = 30, pause_minutes = 0;
  }
  DaytonaPlugin fx(options);
  CreateRequest r{.lease_id = "lease-1", .slug = "calm-otter"};
  r.idle = idle;
  PluginCall created = fx.plugin->call(fx.d().create, wire::to_json(r));
  Sandbox sb = sandbox_of(created);
  CHECK(fx.sandbox(sb.id).auto_stop_minutes == stop_minutes);
  CHECK(fx.sandbox(sb.id).auto_pause_minutes == pause_minutes);
  CHECK(fx.server.calls("autopause") == (pause_minutes ? 1 : 0));
  CHECK(detail(sb, "autoPauseMinutes") == (pause_minutes ? "30" : ""));
  PluginCall again = fx.plugin->call(fx.d().get, wire::to_json(wire::GetRequest{sb.id}));
  CHECK(sandbox_of(again).details["autoStopMinutes"] == std::to_string(stop_minutes));
  REQUIRE(created.warnings.size() == (warned ? 1u : 0u));
  if (warned) CHECK(created.warnings[0].find("Daytona cannot pause container sandbox") != std::string::npos);
}

TEST_CASE("daytona --idle with auto-stop 0 (never) is refused before anything is created") {
  DaytonaPlugin fx(std::map<std::string, std::string>{{"auto-stop", "0"}});
  CreateRequest r{.lease_id = "lease-1", .slug = "calm-otter"};
  r.idle = "stop";
  PluginCall c = fx.plugin->call(fx.d().create, wire::to_json(r));
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_INVALID_ARGUMENT);
  CHECK(c.message.find("--idle stop needs Daytona's auto-stop interval") != std::string::npos);
  CHECK(c.hint.find("--daytona-auto-stop") != std::string::npos);
  CHECK(fx.server.calls("create") == 0);
}
