// The daytona plugin's fork through its C ABI against the stand-in Daytona: each fork is
// an independent copy of the source's files, labelled for its own lease, the source left
// as it was; forks that could not be made are error entries and leave nothing behind; a
// call that fails or is cancelled as a whole leaves none of the forks it made.
#include <doctest/doctest.h>

#include <algorithm>

#include "corral/wire.hpp"
#include "plugin_fixture.hpp"

using namespace corral;
using namespace corral::test;

namespace {

// Forks `source` once per lease in `leases` (slug "fork-N", one label of its own).
PluginCall fork_call(DaytonaPlugin& fx, const Sandbox& source, const std::vector<std::string>& leases,
                     std::function<bool()> cancelled = {}) {
  wire::ForkRequest request{source, {}};
  for (size_t i = 0; i < leases.size(); ++i)
    request.forks.push_back({leases[i], "fork-" + std::to_string(i + 1), {{"team", "forks"}}});
  return fx.plugin->call(fx.d().fork, wire::to_json(request), std::move(cancelled));
}

std::vector<ForkOutcome> forked(const PluginCall& c) {
  INFO(c.message);
  REQUIRE(c.ok);
  return wire::read<wire::ForkResult>(c.result, "fork").forks;
}

// The outcome's error code as corral spells it, or "" for a fork.
std::string code_of(const ForkOutcome& f) { return f.error ? std::string(to_string(f.error->code())) : ""; }

std::string cat(DaytonaPlugin& fx, const Sandbox& sb, const std::string& file) {
  PluginCall c = run_shell(fx, sb, "cat " + file);
  INFO(c.message);
  REQUIRE(c.ok);
  return c.out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("daytona fork makes independent copies labelled for their own leases and leaves the source as it was") {
  DaytonaPlugin fx;
  Sandbox source = ready(fx, {{"a.txt", "one\n"}}, "lease-src");
  REQUIRE(run_shell(fx, source, "echo made-here > b.txt").ok);
  std::string source_state = "started";
  SUBCASE("from a running sandbox") {}
  SUBCASE("from a paused sandbox") {
    REQUIRE(call_on(fx, fx.d().pause, source).ok);
    source_state = "stopped";
  }

  std::vector<ForkOutcome> forks = forked(fork_call(fx, source, {"lease-f1", "lease-f2"}));
  REQUIRE(forks.size() == 2);
  REQUIRE(forks[0].sandbox);
  REQUIRE(forks[1].sandbox);
  const Sandbox f1 = *forks[0].sandbox, f2 = *forks[1].sandbox;
  CHECK(f1.state == "running");
  CHECK(f2.state == "running");
  CHECK(f1.id != source.id);
  CHECK(f2.id != f1.id);
  CHECK(fx.server.calls("fork") == 2);
  CHECK(fx.sandbox(source.id).state == source_state);
  // Each fork says it is its own lease's, not the source's.
  const auto labels = fx.sandbox(f1.id).labels;
  CHECK(labels.at("corral-lease") == "lease-f1");
  CHECK(labels.at("corral-slug") == "fork-1");
  CHECK(labels.at("team") == "forks");
  CHECK(labels.at("corral-owner") == "corral");
  CHECK(f1.labels == labels);
  CHECK(fx.sandbox(f1.id).name == "corral-lease-f1");
  CHECK(fx.sandbox(f1.id).parent == source.id);
  PluginCall listed = fx.plugin->call(fx.d().list, wire::to_json(wire::ListRequest{{{"corral-lease", "lease-src"}}}));
  REQUIRE(listed.ok);
  CHECK(wire::read<wire::ListResult>(listed.result, "list").sandboxes.size() == 1);

  // The source's files, synced and made, are in each fork; a write in one is seen nowhere else.
  CHECK(cat(fx, f1, "a.txt b.txt") == "one\nmade-here\n");
  REQUIRE(run_shell(fx, f1, "echo changed > a.txt").ok);
  CHECK(cat(fx, f2, "a.txt") == "one\n");
  CHECK(cat(fx, source, "a.txt") == "one\n");
}

TEST_CASE("daytona fork that partly fails answers an error entry for each fork not made and leaves none of them") {
  DaytonaPlugin fx;
  Sandbox source = ready(fx, {{"a.txt", "one\n"}}, "lease-src");
  std::string code = "unavailable";
  int deletes = 0;
  SUBCASE("the second fork refused by quota") {
    fx.server.with([](auto& st) {
      st.faults.quota_message = "Total CPU limit exceeded. Maximum allowed: 4";
      st.faults.quota_skip = 1;
      return st.faults.quota_route = "fork";
    });
    code = "quota";
  }
  SUBCASE("the second fork answered 503 (never retried: each call makes a fork)") {
    fx.server.with([](auto& st) {
      st.faults.fail_route = "fork";
      st.faults.fail_skip = 1;
      return st.faults.fail_times = 1;
    });
    deletes = 1;  // by its name, in case Daytona made it after all: none there
  }
  SUBCASE("the second fork's answer cut short after Daytona made it: found by its name and deleted") {
    fx.server.with([](auto& st) {
      st.faults.cut_route = "fork";
      st.faults.cut_skip = 1;
      return st.faults.cut_times = 1;
    });
    deletes = 1;
  }
  std::vector<ForkOutcome> forks = forked(fork_call(fx, source, {"lease-f1", "lease-f2"}));
  REQUIRE(forks.size() == 2);
  CHECK(code_of(forks[1]) == code);
  if (code == "quota") CHECK(std::string(forks[1].error->what()).find("Total CPU limit exceeded") != std::string::npos);
  CHECK(fx.server.calls("fork") == 2);
  CHECK(fx.server.calls("delete") == deletes);
  REQUIRE(forks[0].sandbox);
  CHECK(sorted(fx.server.sandbox_ids()) == sorted({source.id, forks[0].sandbox->id}));
  CHECK(cat(fx, *forks[0].sandbox, "a.txt") == "one\n");
}

TEST_CASE("daytona fork that never starts is deleted and answered as an error entry") {
  DaytonaPlugin fx;
  Sandbox source = ready(fx, {{"a.txt", "one\n"}}, "lease-src");
  fx.server.with([](auto& st) { return st.faults.fail_state = "error"; });
  std::vector<ForkOutcome> forks = forked(fork_call(fx, source, {"lease-f1"}));
  REQUIRE(forks.size() == 1);
  CHECK_FALSE(forks[0].sandbox);
  CHECK(code_of(forks[0]) == "unavailable");
  CHECK(std::string(forks[0].error->what()).find("failed to start (state error)") != std::string::npos);
  CHECK(fx.server.sandbox_ids() == std::vector<std::string>{source.id});
}

TEST_CASE("daytona fork that fails or is cancelled as a whole leaves none of the forks it made") {
  DaytonaPlugin fx;
  Sandbox source = ready(fx, {{"a.txt", "one\n"}}, "lease-src");
  PluginCall c;
  SUBCASE("Ctrl-C after the first fork was asked for") {
    c = fork_call(fx, source, {"lease-f1", "lease-f2"}, [&fx] { return fx.server.calls("fork") == 1; });
    CHECK(c.code == CORRAL_ERR_CANCELLED);
    CHECK(fx.server.calls("fork") == 1);
  }
  SUBCASE("Ctrl-C while the forks start") {
    fx.server.with([](auto& st) { return st.faults.start_delay_ms = 60'000; });
    c = fork_call(fx, source, {"lease-f1", "lease-f2"}, [&fx] { return fx.server.calls("fork") == 2; });
    CHECK(c.code == CORRAL_ERR_CANCELLED);
    CHECK(fx.server.calls("fork") == 2);
  }
  SUBCASE("the source deleted as the second fork is asked for") {
    fx.server.with([](auto& st) {
      st.faults.vanish_route = "fork";
      return st.faults.vanish_skip = 1;
    });
    c = fork_call(fx, source, {"lease-f1", "lease-f2"});
    CHECK(c.code == CORRAL_ERR_NOT_FOUND);
    CHECK(c.message == "Daytona sandbox " + source.id + " no longer exists");
  }
  CHECK_FALSE(c.ok);
  CHECK(fx.server.calls("delete") >= 1);
  std::vector<std::string> left = fx.server.sandbox_ids();
  std::erase(left, source.id);
  CHECK(left.empty());
}
