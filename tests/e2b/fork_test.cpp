// The e2b plugin's fork through its C ABI against the stand-in E2B: independent copies of
// the source's files from one request, a paused source left paused, a fork that partly
// fails (the team's concurrent-sandbox limit), Ctrl-C during the fork (nothing left
// behind), and the idle policy that pauses a kept sandbox instead of deleting it.
#include <doctest/doctest.h>

#include "plugin_fixture.hpp"

using namespace corral;
using namespace corral::test;

namespace {

// The fork request for `source` with `n` targets (lease fork-<i>).
std::string fork_request(const std::string& source, int n) {
  wire::ForkRequest r{sandbox_of(source), {}};
  for (int i = 0; i < n; ++i) {
    const std::string lease = "fork-" + std::to_string(i);
    r.forks.push_back(ForkTarget{lease, "slug-" + std::to_string(i), {{"corral-lease", lease}}});
  }
  return wire::to_json(r);
}

std::vector<ForkOutcome> outcomes(const PluginCall& c) { return wire::read<wire::ForkResult>(c.result, "fork").forks; }

// The sandbox JSON of an outcome that made one.
std::string forked(const ForkOutcome& outcome) {
  REQUIRE(outcome.sandbox);
  return json::to_json(*outcome.sandbox, true);
}

std::string server_state(E2bFixture& fx, const std::string& id) {
  return fx.server.with([&](auto& st) { return st.sandboxes.at(id).state; });
}

std::string cat(E2bFixture& fx, const std::string& sandbox) {
  return fx.plugin->call(fx.d().exec, exec_request(sandbox, shell("cat note.txt"))).out;
}

}  // namespace

TEST_CASE("fork makes independent copies of the source's files in one request; the source runs on") {
  E2bFixture fx(Opts{{"lifetime", "2h"}});
  std::string source = ready(fx);
  REQUIRE(exit_code(fx.plugin->call(fx.d().exec, exec_request(source, shell("echo source > note.txt")))) == 0);

  PluginCall c = fx.plugin->call(fx.d().fork, fork_request(source, 2));
  INFO(c.message);
  REQUIRE(c.ok);
  std::vector<ForkOutcome> got = outcomes(c);
  REQUIRE(got.size() == 2);
  CHECK(fx.server.calls("fork") == 1);  // one request for both
  auto body = json::parse(fx.server.with([](auto& st) { return st.fork_bodies.back(); }), "fork");
  CHECK(json::get_int(body, "count") == 2);
  CHECK(json::get_int(body, "timeout") == 7200);

  const std::string a = forked(got[0]), b = forked(got[1]);
  CHECK(id_of(a) != id_of(b));
  CHECK(id_of(a) != id_of(source));
  auto doc = json::parse(a, "fork");
  CHECK(json::get_string(doc, "state") == "running");
  // E2B forks inherit the source's metadata and cannot change it: the labels say so.
  CHECK(json::get_map(doc, "labels")["corral-lease"] == "lease-1");
  CHECK(fx.server.with([&](auto& st) { return st.sandboxes.at(id_of(a)).metadata.at("corral-lease"); }) == "lease-1");
  CHECK_FALSE(json::get_map(doc, "secrets")["envdAccessToken"].empty());

  // Each fork starts from the source's files, then has its own.
  CHECK(cat(fx, a) == "source\n");
  REQUIRE(exit_code(fx.plugin->call(fx.d().exec, exec_request(a, shell("echo fork > note.txt")))) == 0);
  CHECK(cat(fx, a) == "fork\n");
  CHECK(cat(fx, source) == "source\n");
  CHECK(cat(fx, b) == "source\n");
  CHECK(server_state(fx, id_of(source)) == "running");
  // The plugin that made them reaches them without connecting again.
  CHECK(fx.server.calls("connect") == 0);
  for (const std::string& s : {a, b, source}) CHECK(fx.plugin->call(fx.d().destroy, with_sandbox(s)).ok);
  CHECK(fx.server.sandbox_ids().empty());
}

TEST_CASE("a fork keeps its source's recorded network, which a command with secrets sets its rules beside") {
  E2bFixture fx(Opts{{"lifetime", "2h"}});
  std::string source = ready(fx);
  wire::ForkRequest r{sandbox_of(source), {ForkTarget{"fork-0", "slug-0", {{"corral-lease", "fork-0"}}}}};
  r.sandbox.details["network"] = "allow:pypi.org";
  PluginCall c = fx.plugin->call(fx.d().fork, wire::to_json(r));
  INFO(c.message);
  REQUIRE(c.ok);
  std::vector<ForkOutcome> got = outcomes(c);
  REQUIRE(got.size() == 1);
  REQUIRE(got[0].sandbox);
  CHECK(got[0].sandbox->details["network"] == "allow:pypi.org");
  for (const std::string& s : {forked(got[0]), source}) CHECK(fx.plugin->call(fx.d().destroy, with_sandbox(s)).ok);
}

TEST_CASE("a paused source is resumed for the fork and paused again") {
  E2bFixture fx;
  std::string source = ready(fx);
  REQUIRE(exit_code(fx.plugin->call(fx.d().exec, exec_request(source, shell("echo before > note.txt")))) == 0);
  REQUIRE(fx.plugin->call(fx.d().pause, with_sandbox(source)).ok);

  PluginCall c = fx.plugin->call(fx.d().fork, fork_request(source, 1));
  INFO(c.message);
  REQUIRE(c.ok);
  CHECK(server_state(fx, id_of(source)) == "paused");
  CHECK(fx.server.calls("pause") == 2);
  std::string f = forked(outcomes(c).at(0));
  CHECK(cat(fx, f) == "before\n");
  for (const std::string& s : {f, source}) fx.plugin->call(fx.d().destroy, with_sandbox(s));
}

TEST_CASE("a fork that partly fails: the forks past the team's limit are quota errors, in order; the rest are made") {
  E2bFixture fx;
  std::string source = create(fx);
  // The source and two forks may run; the third and fourth fork may not.
  fx.server.with([](auto& st) { st.faults.max_sandboxes = 3; return 0; });
  PluginCall c = fx.plugin->call(fx.d().fork, fork_request(source, 4));
  INFO(c.message);
  REQUIRE(c.ok);
  std::vector<ForkOutcome> got = outcomes(c);
  REQUIRE(got.size() == 4);
  CHECK(id_of(forked(got[0])) != id_of(forked(got[1])));
  for (int i : {2, 3}) {
    CHECK_FALSE(got[i].sandbox);
    REQUIRE(got[i].error);
    CHECK(got[i].error->code() == ErrorCode::quota);
    const std::string message = got[i].error->what();
    CHECK(message.find("fork " + std::to_string(i + 1)) != std::string::npos);
    CHECK(message.find("maximum number of concurrent E2B sandboxes") != std::string::npos);
  }
  CHECK(fx.server.sandbox_ids().size() == 3);  // the host deletes the made ones unless kept
  for (int i : {0, 1}) fx.plugin->call(fx.d().destroy, with_sandbox(forked(got[i])));
  fx.plugin->call(fx.d().destroy, with_sandbox(source));
}

TEST_CASE("Ctrl-C during a fork: the request is finished, then every fork it made is deleted") {
  E2bFixture fx;
  std::string source = create(fx);
  // The forks are made, then the answer waits: a request cut short here would leave them.
  fx.server.with([](auto& st) {
    st.faults.delay_route = "fork";
    st.faults.delay_ms = 1500;
    return 0;
  });
  PluginCall c = fx.plugin->call(fx.d().fork, fork_request(source, 3), [&] { return fx.server.calls("fork") > 0; });
  CHECK_FALSE(c.ok);
  CHECK(c.code == CORRAL_ERR_CANCELLED);
  CHECK(fx.server.sandbox_ids() == std::vector<std::string>{id_of(source)});
  CHECK(fx.server.calls("kill") == 3);
  CHECK(server_state(fx, id_of(source)) == "running");
  fx.plugin->call(fx.d().destroy, with_sandbox(source));
}

TEST_CASE("fork of a sandbox that vanished is not-found, and makes nothing") {
  E2bFixture fx;
  std::string source = create(fx);
  fx.server.with([&](auto& st) { st.remove(id_of(source)); return 0; });
  PluginCall c = fx.plugin->call(fx.d().fork, fork_request(source, 2));
  CHECK(c.code == CORRAL_ERR_NOT_FOUND);
  CHECK(c.message.find(id_of(source)) != std::string::npos);
  CHECK(fx.server.calls("fork") == 0);
  CHECK(fx.server.sandbox_ids().empty());
}

TEST_CASE("idle pause: E2B pauses the sandbox at the end of its lifetime instead of deleting it") {
  SUBCASE("idle pause asks for autoPause, keeping the memory as pause-memory says") {
    E2bFixture fx(Opts{{"pause-memory", "false"}});
    CreateRequest r{.lease_id = "lease-1",
                    .slug = "calm-otter",
                    .labels = {{"corral-owner", "corral"}, {"corral-lease", "lease-1"}}};
    r.idle = "pause";
    PluginCall c = fx.plugin->call(fx.d().create, wire::to_json(r));
    INFO(c.message);
    REQUIRE(c.ok);
    auto body = json::parse(fx.server.with([](auto& st) { return st.create_bodies.back(); }), "create");
    CHECK(json::get_bool(body, "autoPause") == true);
    CHECK(json::get_bool(body, "autoPauseMemory", true) == false);
    // Its lifetime ends: it is paused, not deleted, and resumes with its files.
    const std::string id = id_of(c.result);
    fx.server.with([&](auto& st) {
      st.sandboxes.at(id).end_at = std::chrono::system_clock::now() - std::chrono::seconds(1);
      return 0;
    });
    PluginCall got = fx.plugin->call(fx.d().get, "{\"id\":\"" + id + "\"}");
    REQUIRE(got.ok);
    CHECK(json::get_string(json::parse(got.result, "get"), "state") == "paused");
    CHECK(fx.plugin->call(fx.d().resume, with_sandbox(c.result)).ok);
    CHECK(server_state(fx, id) == "running");
    fx.plugin->call(fx.d().destroy, with_sandbox(c.result));
  }
  SUBCASE("no idle policy: deleted at the end of its lifetime, as before") {
    E2bFixture fx;
    std::string sb = create(fx);
    auto body = json::parse(fx.server.with([](auto& st) { return st.create_bodies.back(); }), "create");
    CHECK(json::get_bool(body, "autoPause", true) == false);
    CHECK_FALSE(body.HasMember("autoPauseMemory"));
    fx.server.with([&](auto& st) {
      st.sandboxes.at(id_of(sb)).end_at = std::chrono::system_clock::now() - std::chrono::seconds(1);
      return 0;
    });
    CHECK(fx.server.sandbox_ids().empty());
  }
}
