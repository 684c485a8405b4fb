// Sixteen corral processes at once on one lease, for each provider with run-session that
// runs here, and a run beside another on local (exec-concurrent): runs on the lease are serialized (their commands too, unless the provider has
// exec-concurrent), listings and status never see a torn claim, and of sixteen
// simultaneous stops exactly one succeeds while the others say why.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"

namespace fs = std::filesystem;
using corral::test::Background;
using corral::test::CliEnv;
using corral::test::process_alive;
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

// Whether the commands of two runs of one lease may overlap (exec-concurrent).
enum class Commands { one_at_a_time, side_by_side };

void sixteen_on_one_lease(const CliEnv& env, const std::string& provider, Commands commands_run) {
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
  std::string what, who;
  std::map<std::string, int> started, ended;
  std::string running;  // the run whose end must come next when commands run one at a time
  while (lines >> what >> who) {
    REQUIRE_MESSAGE((what == "start" || what == "end"), log.out);
    if (what == "start") {
      ++started[who];
      if (commands_run == Commands::one_at_a_time) CHECK_MESSAGE(running.empty(), "runs overlapped:\n" << log.out);
      running = who;
    } else {
      ++ended[who];
      CHECK_MESSAGE(started[who] == 1, "an end before its start:\n" << log.out);
      if (commands_run == Commands::one_at_a_time) CHECK_MESSAGE(running == who, "runs overlapped:\n" << log.out);
      running.clear();
    }
  }
  CHECK(static_cast<int>(started.size()) == runs);  // every run's command ran once, whole
  CHECK(started == ended);

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
  sixteen_on_one_lease(env, "local", Commands::side_by_side);
  std::error_code ec;
  CHECK(fs::is_empty(env.state_dir() / "corral" / "local", ec));
}

// True once the file at `path` contains `text`, waiting up to a minute.
bool shows(const fs::path& path, const std::string& text) {
  for (int i = 0; i < 600; ++i) {
    if (read_file(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_CASE("local: a run of a kept sandbox runs its command beside another's, and a stop waits for the commands") {
  CliEnv env;
  env.root().write("work/a.txt", "a");
  const std::string lease = kept_lease(env, "local");
  // The first command waits for a line on its stdin, which the test writes only at the end.
  const fs::path fifo = env.root().path() / "input";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  Background first = env.start({"run", "--id", lease, "--", "sh", "-c", "echo started; read line; echo \"got $line\""},
                               {}, fifo.string());
  const int writer = ::open(fifo.c_str(), O_WRONLY);  // until corral opens its end
  REQUIRE(writer >= 0);
  REQUIRE_MESSAGE(shows(first.out, "started"), read_file(first.err));

  // Another run syncs and runs while the first command waits.
  auto beside = env.run({"run", "--id", lease, "--", "sh", "-c", "cat a.txt; echo ' beside'"});
  CHECK_MESSAGE(beside.exit_code == 0, beside.err);
  CHECK(beside.out == "a beside\n");
  CHECK(process_alive(first.pid));
  CHECK(env.lease_states() == std::vector<std::string>{"in use"});

  // A stop waits for the command, saying so, and does not cut it short.
  Background stop = env.start({"stop", "--id", lease});
  CHECK_MESSAGE(shows(stop.err, "a command is running in it"), read_file(stop.err));
  CHECK(process_alive(stop.pid));
  REQUIRE(::write(writer, "hello\n", 6) == 6);
  ::close(writer);
  CHECK_MESSAGE(first.wait() == 0, read_file(first.err));
  CHECK(read_file(first.out) == "started\ngot hello\n");
  CHECK_MESSAGE(stop.wait() == 0, read_file(stop.err));
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("testbox: sixteen corrals on one lease") {
  CliEnv env;
  fs::path boxes = env.root().path() / "boxes";
  fs::create_directories(boxes);
  env.add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
  env.env["TESTBOX_DIR"] = boxes.string();
  env.root().write("work/a.txt", "a");
  sixteen_on_one_lease(env, "testbox", Commands::one_at_a_time);
  CHECK(fs::is_empty(boxes));
}
