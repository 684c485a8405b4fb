// The e2b plugin's pause and resume through its C ABI against the stand-in E2B: the
// paused state in get and list, files kept across a pause, the pause body the option
// chooses, and the faults (a sandbox gone before its pause, a resume over the team's
// concurrent-sandbox limit).
#include <doctest/doctest.h>

#include <httplib.h>

#include "plugin_fixture.hpp"

using namespace corral;
using namespace corral::test;

namespace {

std::string state_of(const std::string& sandbox_json) {
  return json::get_string(json::parse(sandbox_json, "sandbox"), "state");
}

// What the stand-in says of sandbox `id`'s state.
std::string server_state(E2bFixture& fx, const std::string& id) {
  return fx.server.with([&](auto& st) { return st.sandboxes.at(id).state; });
}

PluginCall get(E2bFixture& fx, const std::string& id) { return fx.plugin->call(fx.d().get, "{\"id\":\"" + id + "\"}"); }

}  // namespace

TEST_CASE("pause keeps the files; get and list say paused; resume brings the sandbox back as it was") {
  E2bFixture fx(Opts{{"lifetime", "2h"}});
  std::string sb = ready(fx);
  std::string id = id_of(sb);
  REQUIRE(exit_code(fx.plugin->call(fx.d().exec, exec_request(sb, shell("echo kept > note.txt")))) == 0);

  PluginCall paused = fx.plugin->call(fx.d().pause, with_sandbox(sb));
  INFO(paused.message);
  REQUIRE(paused.ok);
  CHECK(state_of(paused.result) == "paused");
  CHECK(server_state(fx, id) == "paused");
  // The memory is kept by default (pause-memory true).
  auto body = json::parse(fx.server.with([](auto& st) { return st.pause_bodies.back(); }), "pause");
  CHECK(json::get_bool(body, "memory") == true);

  PluginCall got = get(fx, id);
  REQUIRE(got.ok);
  CHECK(state_of(got.result) == "paused");
  PluginCall listed = fx.plugin->call(fx.d().list, R"({"labels":{"corral-lease":"lease-1"}})");
  REQUIRE(listed.ok);
  auto doc = json::parse(listed.result, "list");
  REQUIRE(doc["sandboxes"].Size() == 1);
  CHECK(json::get_string(doc["sandboxes"][0], "state") == "paused");

  // Pausing it again is no error (E2B answers 409 the second time).
  PluginCall twice = fx.plugin->call(fx.d().pause, with_sandbox(sb));
  INFO(twice.message);
  CHECK(twice.ok);
  CHECK(state_of(twice.result) == "paused");
  CHECK(fx.server.calls("pause") == 2);

  // A new process, as `corral resume --id` is; the sandbox had a minute left.
  fx.open({{"lifetime", "2h"}});
  fx.server.with([&](auto& st) {
    st.sandboxes.at(id).end_at = std::chrono::system_clock::now() + std::chrono::minutes(1);
    return 0;
  });
  const int connects = fx.server.calls("connect");
  PluginCall resumed = fx.plugin->call(fx.d().resume, with_sandbox(sb));
  INFO(resumed.message);
  REQUIRE(resumed.ok);
  CHECK(state_of(resumed.result) == "running");
  CHECK(server_state(fx, id) == "running");
  CHECK(fx.server.calls("connect") == connects + 1);
  // connect carries the sandbox's configured lifetime (2h).
  const long seconds_left = fx.server.with([&](auto& st) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::seconds>(st.sandboxes.at(id).end_at - std::chrono::system_clock::now())
            .count());
  });
  CHECK(seconds_left > 3600);
  // Ready for exec without another connect, its files as they were.
  PluginCall cat = fx.plugin->call(fx.d().exec, exec_request(resumed.result, shell("cat note.txt")));
  CHECK(cat.out == "kept\n");
  CHECK(fx.server.calls("connect") == connects + 1);

  // Resuming a running sandbox is no error either.
  PluginCall again = fx.plugin->call(fx.d().resume, with_sandbox(resumed.result));
  CHECK(again.ok);
  CHECK(state_of(again.result) == "running");
  CHECK(fx.plugin->call(fx.d().destroy, with_sandbox(sb)).ok);
}

TEST_CASE("a paused sandbox's envd does not answer; a command on it resumes it first") {
  E2bFixture fx;
  std::string sb = ready(fx);
  std::string id = id_of(sb);
  REQUIRE(fx.plugin->call(fx.d().pause, with_sandbox(sb)).ok);
  httplib::Client client(fx.server.sandbox_url());
  httplib::Headers headers = {{"E2b-Sandbox-Id", id}, {"E2b-Sandbox-Port", "49983"}};
  auto res = client.Get("/files?path=/home/user/workspace/README", headers);
  REQUIRE(res);
  CHECK(res->status == 502);
  CHECK(res->body.find("paused") != std::string::npos);
  // The plugin that paused it knows envd is gone: the next command connects (resumes) first.
  PluginCall run = fx.plugin->call(fx.d().exec, exec_request(sb, shell("cat README")));
  INFO(run.message);
  CHECK(run.out == "workspace\n");
  CHECK(server_state(fx, id) == "running");
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("pause-memory false asks E2B for a files-only pause") {
  E2bFixture fx(Opts{{"pause-memory", "false"}});
  std::string sb = create(fx);
  REQUIRE(fx.plugin->call(fx.d().pause, with_sandbox(sb)).ok);
  auto body = json::parse(fx.server.with([](auto& st) { return st.pause_bodies.back(); }), "pause");
  CHECK(json::get_bool(body, "memory", true) == false);
  CHECK(PluginHarness::try_open(CORRAL_E2B_PLUGIN, {{"pause-memory", "sometimes"}}).message.find("pause-memory") !=
        std::string::npos);
  fx.plugin->call(fx.d().destroy, with_sandbox(sb));
}

TEST_CASE("pause of a sandbox that vanished is not-found, saying it may have passed its lifetime") {
  E2bFixture fx;
  std::string sb = create(fx);
  std::string id = id_of(sb);
  fx.server.with([](auto& st) { st.faults.vanish_route = "pause"; return 0; });
  PluginCall c = fx.plugin->call(fx.d().pause, with_sandbox(sb));
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_NOT_FOUND);
  CHECK(c.message.find(id) != std::string::npos);
  CHECK(c.hint.find("lifetime") != std::string::npos);
  CHECK(fx.server.sandbox_ids().empty());
}

TEST_CASE("a resume refused by the team's concurrent-sandbox limit is a quota error; the sandbox stays paused") {
  E2bFixture fx;
  std::string a = create(fx, "lease-a");
  std::string b = create(fx, "lease-b");
  REQUIRE(fx.plugin->call(fx.d().pause, with_sandbox(a)).ok);
  // b runs; one running sandbox is all the team may have.
  fx.server.with([](auto& st) {
    st.faults.max_sandboxes = 1;
    st.faults.retry_after = "0";
    return 0;
  });
  PluginCall c = fx.plugin->call(fx.d().resume, with_sandbox(a));
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_QUOTA);
  CHECK(c.message.find("maximum number of concurrent E2B sandboxes") != std::string::npos);
  CHECK(c.message.find("retried it 4 times") != std::string::npos);
  CHECK(c.hint.find("corral stop --id") != std::string::npos);
  CHECK(server_state(fx, id_of(a)) == "paused");
  // Once b is gone, the same resume goes through.
  REQUIRE(fx.plugin->call(fx.d().destroy, with_sandbox(b)).ok);
  PluginCall ok = fx.plugin->call(fx.d().resume, with_sandbox(a));
  INFO(ok.message);
  CHECK(ok.ok);
  CHECK(server_state(fx, id_of(a)) == "running");
  fx.plugin->call(fx.d().destroy, with_sandbox(a));
}
