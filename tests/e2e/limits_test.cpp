// The user's `limits:` across real corral processes: several terminals and a fan-out
// against a provider that holds 2 sandboxes at most (testbox with TESTBOX_QUOTA=2, which
// refuses a third with a quota error, so a run that slipped past the gate fails). Each
// command prints how many of testbox's sandboxes exist while it runs.
#include <doctest/doctest.h>

#include <signal.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"

namespace fs = std::filesystem;
using corral::test::Background;
using corral::test::CliEnv;
using corral::test::CliResult;
using corral::test::read_file;

namespace {

struct Limited : CliEnv {
  fs::path boxes = root().path() / "boxes";
  explicit Limited(int sandboxes) {
    fs::create_directories(boxes);
    add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
    env["TESTBOX_DIR"] = boxes.string();
    env["TESTBOX_QUOTA"] = "2";
    root().write("work/file.txt", "synced");
    root().write("config/corral/config.yaml",
                 "limits:\n  testbox: {sandboxes: " + std::to_string(sandboxes) + "}\n");
  }
  // A command that prints the live sandboxes of testbox, then takes a while.
  std::vector<std::string> counting_run(const std::string& pause = "0.4") const {
    return {"run", "--provider", "testbox", "--progress", "json", "--", "sh", "-c",
            "ls -d '" + boxes.string() + "'/tb-* | wc -l; sleep " + pause};
  }
};

// The numbers printed on each line of `out` (a fan-out's lines start with "[i/n] ").
std::vector<int> counts(const std::string& out) {
  std::vector<int> got;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"((\d+)\s*$)"))) got.push_back(std::stoi(m[1]));
  }
  return got;
}

// Waits (bounded) until `file` holds `what`.
bool wait_for(const fs::path& file, const std::string& what) {
  for (int i = 0; i < 600; ++i) {
    if (read_file(file).find(what) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE("three corral processes against a limit of 2: never more than 2 live, all finish, the waits reported") {
  Limited t(2);
  std::vector<Background> started;
  for (int i = 0; i < 3; ++i) started.push_back(t.start(t.counting_run()));
  std::string all_err;
  for (Background& b : started) {
    const int code = b.wait();
    const std::string out = read_file(b.out), err = read_file(b.err);
    CHECK_MESSAGE(code == 0, err);
    for (int n : counts(out)) CHECK(n <= 2);
    CHECK(counts(out).size() == 1);
    all_err += err;
  }
  // At least one waited for the others, and said so as the JSON progress documents.
  CHECK_MESSAGE(all_err.find(R"("phase":"slot-wait","state":"start","provider":"testbox","reason":"limit","inUse":2,"limit":2)") !=
                    std::string::npos,
                all_err);
  CHECK(all_err.find(R"("phase":"slot-wait","state":"done")") != std::string::npos);
  CHECK(t.claims().empty());
  CHECK(fs::is_empty(t.boxes));
}

TEST_CASE("a fan-out of 6 shards under a limit of 2 runs them all, 2 at a time") {
  Limited t(2);
  CliResult r = t.run({"run", "--provider", "testbox", "--shards", "6", "--max-parallel", "6", "--", "sh", "-c",
                       "ls -d '" + t.boxes.string() + "'/tb-* | wc -l; sleep 0.2"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  const std::vector<int> got = counts(r.out);
  CHECK(got.size() == 6);
  for (int n : got) CHECK(n <= 2);
  CHECK(t.claims().empty());
  CHECK(fs::is_empty(t.boxes));
}

TEST_CASE("a SIGKILLed holder's slot goes to the process waiting for it; list shows the slots in use") {
  Limited t(1);
  const fs::path started = t.root().path() / "started";
  Background holder = t.start({"run", "--provider", "testbox", "--", "sh", "-c",
                               "touch '" + started.string() + "'; sleep 60"});
  for (int i = 0; i < 600 && !fs::exists(started); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(fs::exists(started));
  CliResult listed = t.run({"list"});
  CHECK_MESSAGE(listed.out.find("testbox slots: 1 of 1 in use (limits.testbox.sandboxes)") != std::string::npos,
                listed.out);

  Background next = t.start({"run", "--provider", "testbox", "--progress", "json", "--", "echo", "next ran"});
  REQUIRE(wait_for(next.err, R"("phase":"slot-wait","state":"start")"));
  ::kill(holder.pid, SIGKILL);
  CHECK(holder.wait() == 128 + SIGKILL);
  // Its slot came back with its death, not at the end of its 60 s command.
  CHECK(next.wait(std::chrono::seconds(30)) == 0);
  CHECK(read_file(next.out) == "next ran\n");

  // The killed run's sandbox is abandoned, not counted; stop --orphans removes it.
  CHECK(t.run({"stop", "--orphans", "--provider", "testbox"}).exit_code == 0);
  CHECK(t.claims().empty());
  CHECK(fs::is_empty(t.boxes));
}

TEST_CASE("a kept sandbox holds its slot until it is stopped; --timeout ends a wait for one with 124") {
  Limited t(1);
  CliResult kept = t.run({"run", "--provider", "testbox", "--keep", "--", "true"});
  REQUIRE_MESSAGE(kept.exit_code == 0, kept.err);
  CliResult waited = t.run({"run", "--provider", "testbox", "--timeout", "1", "--", "echo", "never"});
  CHECK(waited.exit_code == 124);
  CHECK(waited.out.empty());
  CHECK_MESSAGE(waited.err.find("--timeout ran out while waiting for a testbox slot (1 of 1 in use)") !=
                    std::string::npos,
                waited.err);
  CHECK(t.run({"stop", "--id", t.only_lease()}).exit_code == 0);
  CliResult after = t.run({"run", "--provider", "testbox", "--timeout", "5", "--", "echo", "ran"});
  CHECK_MESSAGE(after.exit_code == 0, after.err);
  CHECK(after.out == "ran\n");
  CHECK(t.claims().empty());
}

TEST_CASE("corral usage sums sandbox-time by provider, lease and day, skips torn lines, and estimates cost") {
  Limited t(5);
  t.root().write("config/corral/config.yaml", "prices:\n  testbox: 2.5\n");
  for (int i = 0; i < 2; ++i) {
    CliResult r = t.run({"run", "--provider", "testbox", "--", "sleep", "1.1"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  {
    std::ofstream log(t.state_dir() / "corral" / "usage.log", std::ios::app);
    log << "{\"provider\":\"testbox\",\"start\":";  // a line a crash cut
  }
  CliResult by_provider = t.run({"usage", "--json"});
  REQUIRE_MESSAGE(by_provider.exit_code == 0, by_provider.err);
  CHECK(by_provider.err.find("1 line of the usage log was no record") != std::string::npos);
  auto doc = corral::json::parse(by_provider.out, "usage");
  REQUIRE(doc["rows"].Size() == 1);
  const auto& row = doc["rows"][0];
  CHECK(std::string(row["provider"].GetString()) == "testbox");
  CHECK(row["sandboxes"].GetInt() == 2);
  CHECK(row["live"].GetInt() == 0);
  const std::int64_t seconds = row["sandboxSeconds"].GetInt64();
  CHECK(seconds >= 2);
  CHECK(seconds <= 30);
  CHECK(row["estimatedCost"].GetDouble() == doctest::Approx(static_cast<double>(seconds) / 3600 * 2.5));
  CHECK(doc["skippedLines"].GetInt() == 1);
  CHECK(doc["totalSeconds"].GetInt64() == seconds);

  CliResult by_lease = t.run({"usage", "--by", "lease", "--json"});
  auto leases = corral::json::parse(by_lease.out, "usage");
  CHECK(leases["rows"].Size() == 2);
  CHECK(std::string(leases["rows"][0]["leaseId"].GetString()).size() == 12);

  CliResult by_day = t.run({"usage", "--by", "day"});
  CHECK(by_day.exit_code == 0);
  CHECK(by_day.out.find("DAY") == 0);
  CHECK(by_day.out.find("EST. COST") != std::string::npos);
  CHECK(by_day.out.find("total: ") != std::string::npos);

  CliResult wrong = t.run({"usage", "--by", "week"});
  CHECK(wrong.exit_code == 64);
  CHECK(wrong.err.find("--by week: sandbox-time is grouped by provider, day or lease") != std::string::npos);

  // A daily budget already used up refuses the next sandbox, before it is made.
  t.root().write("config/corral/config.yaml", "limits:\n  testbox: {sandbox-hours-per-day: 0.0001}\n");
  CliResult refused = t.run({"run", "--provider", "testbox", "--", "echo", "never"});
  CHECK(refused.exit_code == 75);
  CHECK(refused.out.empty());
  CHECK_MESSAGE(refused.err.find("the testbox budget of 0.0001 sandbox-hours a day is used up") != std::string::npos,
                refused.err);
  CHECK(t.claims().empty());
  CHECK(fs::is_empty(t.boxes));
}
