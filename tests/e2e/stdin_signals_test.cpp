// The everyday run on real bubblewrap: what is piped into corral is the command's stdin,
// to its end, and Ctrl-C or SIGTERM reaches the command as a signal it can trap before
// --stop-timeout kills it; in-process and with local in a helper process.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"

using namespace corral::test;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// `env` with local in its own helper process (isolation: process) when `isolated`.
void isolate_local(const CliEnv& env, bool isolated) {
  if (!isolated) return;
  const fs::path library = fs::path(corral_binary()).parent_path().parent_path() / "lib/corral/plugins/libcorral-local.so";
  REQUIRE(fs::exists(library));
  env.add_registry("local-isolated", {library.string()}, {{"isolation", "process"}});
}

// Waits (bounded) until the background run's stdout holds `text`.
bool printed(const Background& bg, const std::string& text) {
  return eventually([&] { return read_file(bg.out).find(text) != std::string::npos; });
}

corral::json::Document handle(const fs::path& file) { return corral::json::parse(read_file(file), "handle"); }

}  // namespace

TEST_CASE("what is piped into corral is the command's stdin, to its end") {
  for (bool isolated : {false, true}) {
    CAPTURE(isolated);
    CliEnv env;
    isolate_local(env, isolated);
    auto lines = env.run_with_input({"run", "--", "cat"}, "a\nb\n");
    CHECK_MESSAGE(lines.exit_code == 0, lines.err);
    CHECK(lines.out == "a\nb\n");
    // More than a pipe holds, in pieces: every byte arrives and the end is seen.
    const std::string big = random_bytes(3 << 20);
    auto counted = env.run_with_input({"run", "--", "wc", "-c"}, big);
    CHECK_MESSAGE(counted.exit_code == 0, counted.err);
    CHECK(counted.out == std::to_string(big.size()) + "\n");
    // A command that stops reading early ends the run; nothing waits for the rest.
    auto head = env.run_with_input({"run", "--", "head", "-c", "5"}, big);
    CHECK(head.exit_code == 0);
    CHECK(head.out == big.substr(0, 5));
    CHECK(env.local_sandboxes().empty());
  }
}

TEST_CASE("--no-stdin gives the command an empty stdin, and an empty pipe is an empty input") {
  CliEnv env;
  auto closed = env.run_with_input({"run", "--no-stdin", "--", "wc", "-c"}, "abc");
  CHECK(closed.exit_code == 0);
  CHECK(closed.out == "0\n");
  auto empty = env.run_with_input({"run", "--", "wc", "-c"}, "");
  CHECK(empty.exit_code == 0);
  CHECK(empty.out == "0\n");
}

TEST_CASE("input piped to a provider that cannot pass it on is refused, not dropped") {
  CliEnv env;
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  env.env["TESTBOX_DIR"] = env.root().path().string();
  auto refused = env.run_with_input({"run", "--provider", "testbox", "--", "cat"}, "data\n");
  CHECK(refused.exit_code == 64);
  CHECK(refused.err.find("provider 'testbox' cannot pass stdin on to the command") != std::string::npos);
  CHECK(refused.err.find("--no-stdin") != std::string::npos);
  CHECK(refused.err.find("local") != std::string::npos);  // a provider that can
  auto allowed = env.run_with_input({"run", "--provider", "testbox", "--no-stdin", "--", "true"}, "data\n");
  CHECK_MESSAGE(allowed.exit_code == 0, allowed.err);
  // One input has no one shard to go to.
  auto shards = env.run_with_input({"run", "--shards", "2", "--", "cat"}, "data\n");
  CHECK(shards.exit_code == 64);
  CHECK(shards.err.find("--shards runs the command N times") != std::string::npos);
}

TEST_CASE("Ctrl-C reaches the command as SIGINT: its trap writes a report, which is downloaded") {
  for (bool isolated : {false, true}) {
    CAPTURE(isolated);
    CliEnv env;
    isolate_local(env, isolated);
    const fs::path h = env.root().path() / "h.json";
    auto bg = env.start({"run", "--download", "report.txt", "--lease-output", h.string(), "--", "sh", "-c",
                         "trap 'echo interrupted > report.txt; echo trapped; exit 3' INT; echo started; "
                         "while :; do sleep 0.1; done"});
    REQUIRE(printed(bg, "started"));
    const auto t0 = Clock::now();
    ::kill(bg.pid, SIGINT);
    CHECK(bg.wait() == 130);
    CHECK(Clock::now() - t0 < std::chrono::seconds(8));  // ended by its trap, not the 10 s kill
    CHECK(read_file(bg.out) == "started\ntrapped\n");
    auto doc = handle(h);
    CHECK(doc["exitCode"].GetInt() == 3);
    CHECK(doc["error"]["code"].GetString() == std::string("cancelled"));
    CHECK(std::string(doc["error"]["message"].GetString()).find("exit code 3") != std::string::npos);
    const std::string lease = doc["leaseId"].GetString();
    CHECK(read_file(env.workspace() / ".corral/runs" / lease / "report.txt") == "interrupted\n");
    CHECK(env.local_sandboxes().empty());
  }
}

TEST_CASE("SIGTERM reaches the command as SIGTERM") {
  CliEnv env;
  auto bg = env.start({"run", "--", "sh", "-c",
                       "trap 'echo got TERM; exit 0' TERM; trap 'echo got INT; exit 0' INT; echo started; "
                       "while :; do sleep 0.1; done"});
  REQUIRE(printed(bg, "started"));
  ::kill(bg.pid, SIGTERM);
  CHECK(bg.wait() == 130);
  CHECK(read_file(bg.out) == "started\ngot TERM\n");
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("a command that ignores its signal is killed after --stop-timeout, or at a second Ctrl-C") {
  CliEnv env;
  const std::vector<std::string> ignoring = {"sh", "-c", "trap '' INT; echo started; sleep 60"};
  SUBCASE("--stop-timeout") {
    std::vector<std::string> args = {"run", "--stop-timeout", "1500ms", "--"};
    args.insert(args.end(), ignoring.begin(), ignoring.end());
    auto bg = env.start(args);
    REQUIRE(printed(bg, "started"));
    const auto t0 = Clock::now();
    ::kill(bg.pid, SIGINT);
    CHECK(bg.wait() == 130);
    const auto took = Clock::now() - t0;
    CHECK(took >= std::chrono::milliseconds(1400));
    CHECK(took < std::chrono::seconds(9));
    CHECK(read_file(bg.err).find("had not ended 1.5s after the signal it was passed (--stop-timeout)") !=
          std::string::npos);
  }
  SUBCASE("a second Ctrl-C") {
    std::vector<std::string> args = {"run", "--stop-timeout", "5m", "--"};
    args.insert(args.end(), ignoring.begin(), ignoring.end());
    auto bg = env.start(args);
    REQUIRE(printed(bg, "started"));
    const auto t0 = Clock::now();
    ::kill(bg.pid, SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(bg.pid, SIGINT);
    CHECK(bg.wait() == 130);
    CHECK(Clock::now() - t0 < std::chrono::seconds(9));
  }
  CHECK(env.local_sandboxes().empty());
  auto bad = env.run({"run", "--stop-timeout", "soon", "--", "true"});
  CHECK(bad.exit_code == 64);
  CHECK(bad.err.find("invalid duration 'soon'") != std::string::npos);
}
