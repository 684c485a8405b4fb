// Sixteen corral processes at once on one lease, for each provider with run-session that
// runs here: runs on the lease are serialized, listings and status never see a torn
// claim, and of sixteen simultaneous stops exactly one succeeds while the others say why.
#include <doctest/doctest.h>

#include <map>
#include <sstream>

#include "cli.hpp"
#include "corral/json.hpp"

namespace fs = std::filesystem;
using corral::test::Background;
using corral::test::CliEnv;
using corral::test::read_file;

namespace {

constexpr int kProcesses = 16;

struct Finished {
  int exit_code;
  std::string out, err;
};

// Starts every argument list at once, then waits for all of them.
std::vector<Finished> all_at_once(const CliEnv& env, const std::vector<std::vector<std::string>>& commands) {
  std::vector<Background> started;
  for (const auto& args : commands) started.push_back(env.start(args));
  std::vector<Finished> done;
  for (Background& b : started) {
    int code = b.wait();
    done.push_back({code, read_file(b.out), read_file(b.err)});
  }
  return done;
}

// A kept lease of `provider` in `env`; returns its id.
std::string kept_lease(const CliEnv& env, const std::string& provider) {
  fs::path h = env.root().path() / "handle.json";
  auto r = env.run({"run", "--provider", provider, "--keep", "--lease-output", h.string(), "--", "true"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return corral::json::get_string(corral::json::parse(read_file(h), "handle"), "leaseId");
}

void sixteen_on_one_lease(const CliEnv& env, const std::string& provider) {
  const std::string lease = kept_lease(env, provider);

  // Runs, listings and status at once. Each run writes start and end around a pause: if
  // two ran at the same time in the sandbox, their lines would interleave.
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < kProcesses; ++i) {
    if (i % 4 == 3) commands.push_back({"list", "--json"});
    else if (i % 4 == 2) commands.push_back({"status", "--id", lease, "--json"});
    else
      commands.push_back({"run", "--id", lease, "--", "sh", "-c",
                          "echo start " + std::to_string(i) + " >> runs.log; sleep 0.1; echo end " +
                              std::to_string(i) + " >> runs.log"});
  }
  auto done = all_at_once(env, commands);
  int runs = 0;
  for (std::size_t i = 0; i < done.size(); ++i) {
    INFO(commands[i][0] << ": " << done[i].err);
    CHECK(done[i].exit_code == 0);
    if (commands[i][0] == "run") ++runs;
    if (commands[i][0] == "list") {
      auto doc = corral::json::parse(done[i].out, "list --json");  // never a torn claim
      REQUIRE(doc.IsArray());
      CHECK(doc.Size() == 1);
    }
  }
  auto log = env.run({"run", "--id", lease, "--", "cat", "runs.log"});
  REQUIRE(log.exit_code == 0);
  std::istringstream lines(log.out);
  std::string what, who, end_what, end_who;
  int pairs = 0;
  while (lines >> what >> who) {
    const bool ended = static_cast<bool>(lines >> end_what >> end_who);
    REQUIRE_MESSAGE(ended, log.out);
    CHECK_MESSAGE(what == "start", log.out);
    const bool paired = end_what == "end" && end_who == who;
    CHECK_MESSAGE(paired, "runs overlapped:\n" << log.out);
    ++pairs;
  }
  CHECK(pairs == runs);

  // Sixteen stops: one wins, the others learn the lease is gone; nothing is left.
  std::vector<std::vector<std::string>> stops(kProcesses, {"stop", "--id", lease});
  auto stopped = all_at_once(env, stops);
  int won = 0;
  for (const Finished& f : stopped) {
    if (f.exit_code == 0) {
      ++won;
      continue;
    }
    INFO(f.err);
    CHECK(f.exit_code == 66);
    const bool says_why = f.err.find("was stopped while waiting for it") != std::string::npos ||
                          f.err.find("no lease") != std::string::npos;
    CHECK(says_why);
  }
  CHECK(won == 1);
  CHECK(env.claims().empty());
}

}  // namespace

TEST_CASE("local: sixteen corrals on one lease") {
  CliEnv env;
  env.root().write("work/a.txt", "a");
  sixteen_on_one_lease(env, "local");
  std::error_code ec;
  CHECK(fs::is_empty(env.state_dir() / "corral" / "local", ec));
}

TEST_CASE("testbox: sixteen corrals on one lease") {
  CliEnv env;
  fs::path boxes = env.root().path() / "boxes";
  fs::create_directories(boxes);
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  env.env["TESTBOX_DIR"] = boxes.string();
  env.root().write("work/a.txt", "a");
  sixteen_on_one_lease(env, "testbox");
  CHECK(fs::is_empty(boxes));
}
