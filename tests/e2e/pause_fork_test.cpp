// Pause, resume and fork end to end through the CLI: on the local provider for the real
// thing (a paused lease resumed by `run --id`, forks independent of their source, shards
// from a prepared lease), and on testbox for what a local jail cannot produce (a fork
// that partly fails, Ctrl-C during a fork, a resume refused for quota).
#include <doctest/doctest.h>
#include <signal.h>

#include <thread>

#include "cli.hpp"
#include "corral/json.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::eventually;
using corral::test::read_file;

namespace {

corral::json::Document parse(const std::string& text) { return corral::json::parse(text, "corral output"); }

// What `status --json` says of the lease's sandbox state.
std::string sandbox_state(const CliEnv& env, const std::string& lease) {
  auto r = env.run({"status", "--id", lease, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto doc = parse(r.out);
  return corral::json::get_string(doc["sandbox"], "state");
}

// The state `list --json` gives lease `id`.
std::string listed_state(const CliEnv& env, const std::string& id) {
  auto r = env.run({"list", "--json"});
  REQUIRE(r.exit_code == 0);
  auto doc = parse(r.out);
  for (const auto& l : doc.GetArray())
    if (corral::json::get_string(l, "leaseId") == id) return corral::json::get_string(l, "state");
  return "";
}

// The lease ids of the handles in `file`'s {"KEY":[...]}.
std::vector<std::string> handle_leases(const fs::path& file, const char* key) {
  auto doc = parse(read_file(file));
  std::vector<std::string> out;
  for (const auto& h : doc[key].GetArray()) out.push_back(corral::json::get_string(h, "leaseId"));
  return out;
}

struct Testbox : CliEnv {
  fs::path boxes = root().path() / "boxes";
  Testbox() {
    fs::create_directories(boxes);
    add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
    env["TESTBOX_DIR"] = boxes.string();
    root().write("work/file.txt", "synced");
  }
  size_t live() const {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(boxes)) n += e.is_directory() ? 1 : 0;
    return n;
  }
  // A kept testbox lease, its id.
  std::string kept_lease() {
    auto r = run({"run", "--provider", "testbox", "--keep", "--", "true"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return claims().back().stem().string();
  }
};

}  // namespace

TEST_CASE("a paused local lease says so, and `run --id` resumes it with its files as they were") {
  CliEnv env;
  env.root().write("work/file.txt", "synced");
  REQUIRE(env.run({"run", "--keep", "--", "sh", "-c", "echo prepared > deps.txt"}).exit_code == 0);
  const std::string lease = env.only_lease();

  auto r = env.run({"pause", "--id", lease});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(sandbox_state(env, lease) == "paused");
  CHECK(listed_state(env, lease) == "paused");
  // Pausing a paused lease is no error, and says it changed nothing.
  r = env.run({"pause", "--id", lease});
  CHECK(r.exit_code == 0);
  CHECK_MESSAGE(r.err.find(" is paused already; `corral resume --id ") != std::string::npos, r.err);

  r = env.run({"run", "--id", lease, "--", "cat", "deps.txt"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "prepared\n");
  CHECK(r.err.find("is paused; resuming it") != std::string::npos);
  CHECK(sandbox_state(env, lease) != "paused");
  CHECK(listed_state(env, lease) == "kept");

  REQUIRE(env.run({"pause", "--id", lease}).exit_code == 0);
  r = env.run({"resume", "--id", lease});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(sandbox_state(env, lease) != "paused");
  CHECK_MESSAGE(r.err.find("corral: resumed ") != std::string::npos, r.err);
  r = env.run({"run", "--id", lease, "--", "cat", "deps.txt"});
  CHECK(r.out == "prepared\n");
  CHECK(r.err.find("resuming") == std::string::npos);
  // Resuming a running lease says so instead of claiming to have resumed it.
  r = env.run({"resume", "--id", lease});
  CHECK(r.exit_code == 0);
  CHECK_MESSAGE(r.err.find("nothing to resume: ") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find(" is running already") != std::string::npos, r.err);
  CHECK(r.err.find("corral: resumed ") == std::string::npos);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("local forks are leases of their own, and a write in one is seen in neither the source nor another") {
  CliEnv env;
  env.root().write("work/file.txt", "synced");
  REQUIRE(env.run({"run", "--keep", "--", "sh", "-c", "echo v1 > state.txt; mkdir -p out; ln -s state.txt out/link"})
              .exit_code == 0);
  const std::string source = env.only_lease();
  const fs::path handles = env.root().path() / "forks.json";

  auto r = env.run({"fork", "--id", source, "--count", "2", "--lease-output", handles.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> forks = handle_leases(handles, "forks");
  REQUIRE(forks.size() == 2);
  // The forks are kept leases, and their handles say so.
  const auto written = parse(read_file(handles));
  for (const auto& h : written["forks"].GetArray()) CHECK(corral::json::get_bool(h, "kept"));
  CHECK(env.claims().size() == 3);
  CHECK(env.local_sandboxes().size() == 3);
  CHECK(listed_state(env, forks[0]) == "kept");

  r = env.run({"run", "--id", forks[0], "--", "sh", "-c", "cat state.txt; readlink out/link; echo fork0 > state.txt"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "v1\nstate.txt\n");
  CHECK(env.run({"run", "--id", source, "--", "cat", "state.txt"}).out == "v1\n");
  CHECK(env.run({"run", "--id", forks[1], "--", "cat", "state.txt"}).out == "v1\n");
  CHECK(env.run({"run", "--id", forks[0], "--", "cat", "state.txt"}).out == "fork0\n");

  for (const std::string& lease : {forks[0], forks[1], source}) CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("`run --shards --from` runs each shard in a fork of the prepared lease and leaves the lease as it was") {
  CliEnv env;
  env.root().write("work/file.txt", "synced");
  REQUIRE(env.run({"run", "--keep", "--", "sh", "-c", "echo deps > deps.txt"}).exit_code == 0);
  const std::string source = env.only_lease();
  const fs::path handles = env.root().path() / "shards.json";

  auto r = env.run({"run", "--shards", "3", "--from", source, "--lease-output", handles.string(), "--", "sh", "-c",
                    "cat deps.txt; echo $CORRAL_SHARD_INDEX > shard.txt"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  for (int i = 0; i < 3; ++i) CHECK(r.out.find("[" + std::to_string(i) + "/3] deps") != std::string::npos);
  const std::vector<std::string> shards = handle_leases(handles, "shards");
  CHECK(shards.size() == 3);
  CHECK(std::find(shards.begin(), shards.end(), source) == shards.end());
  // The forks are gone; the source is as it was.
  CHECK(env.claims().size() == 1);
  CHECK(env.local_sandboxes().size() == 1);
  r = env.run({"run", "--id", source, "--", "sh", "-c", "test ! -e shard.txt && cat deps.txt"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "deps\n");

  // --keep keeps the forks, as it keeps new sandboxes.
  r = env.run({"run", "--shards", "2", "--from", source, "--keep", "--", "true"});
  CHECK(r.exit_code == 0);
  CHECK(env.claims().size() == 3);
  CHECK(env.run({"stop", "--all"}).exit_code == 0);
}

TEST_CASE("fork and --from refuse what they cannot do before anything is made") {
  CliEnv env;
  env.root().write("work/file.txt", "synced");
  REQUIRE(env.run({"run", "--keep", "--", "true"}).exit_code == 0);
  const std::string lease = env.only_lease();
  auto r = env.run({"run", "--from", lease, "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("only apply to a fan-out") != std::string::npos);
  r = env.run({"fork", "--id", lease, "--count", "0"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("--count must be between 1 and 64") != std::string::npos);
  r = env.run({"run", "--shards", "2", "--from", "no-such-lease", "--", "true"});
  CHECK(r.exit_code == 66);
  CHECK(env.claims().size() == 1);
  CHECK(env.local_sandboxes().size() == 1);
  CHECK(env.run({"stop", "--id", lease}).exit_code == 0);
}

TEST_CASE("a fork that partly fails leaves no fork behind, unless --keep keeps the ones made") {
  Testbox tb;
  const std::string source = tb.kept_lease();
  tb.env["TESTBOX_QUOTA"] = "3";  // the source and two forks
  auto r = tb.run({"fork", "--id", source, "--count", "4"});
  INFO(r.err);
  CHECK(r.exit_code == 75);
  CHECK(r.err.find("2 of 4 forks of lease") != std::string::npos);
  CHECK(r.err.find("none was kept") != std::string::npos);
  CHECK(tb.live() == 1);
  CHECK(tb.claims().size() == 1);

  const fs::path handles = tb.root().path() / "forks.json";
  r = tb.run({"fork", "--id", source, "--count", "4", "--keep", "--lease-output", handles.string()});
  CHECK(r.exit_code == 75);
  CHECK(handle_leases(handles, "forks").size() == 2);
  CHECK(tb.live() == 3);
  CHECK(tb.claims().size() == 3);
  tb.env.erase("TESTBOX_QUOTA");
  CHECK(tb.run({"stop", "--all"}).exit_code == 0);
  CHECK(tb.live() == 0);
}

TEST_CASE("Ctrl-C during a fork leaves no fork, even from a provider that finished it anyway") {
  Testbox tb;
  const std::string source = tb.kept_lease();
  tb.env["TESTBOX_PAUSE"] = "fork:until-stopped";
  corral::test::Background b = tb.start({"fork", "--id", source, "--count", "3"});
  REQUIRE(eventually([&] { return fs::exists(tb.boxes.string() + ".paused"); }));
  ::kill(b.pid, SIGINT);
  CHECK(b.wait(std::chrono::seconds(30)) == 130);
  CHECK(tb.live() == 1);
  CHECK(tb.claims().size() == 1);
}

TEST_CASE("pause of a vanished sandbox and a resume refused for quota say what happened") {
  Testbox tb;
  const std::string gone = tb.kept_lease();
  for (auto& e : fs::directory_iterator(tb.boxes)) fs::remove_all(e.path());
  auto r = tb.run({"pause", "--id", gone});
  CHECK(r.exit_code == 66);
  CHECK(r.err.find("no longer exists") != std::string::npos);
  CHECK(tb.run({"stop", "--id", gone}).exit_code == 0);

  const std::string paused = tb.kept_lease();
  const std::string busy = tb.kept_lease();
  REQUIRE(tb.run({"pause", "--id", paused}).exit_code == 0);
  tb.env["TESTBOX_QUOTA"] = "1";  // `busy` runs: no room for another
  r = tb.run({"run", "--id", paused, "--", "echo", "ran"});
  CHECK(r.exit_code == 75);
  CHECK(r.out.find("ran") == std::string::npos);
  CHECK(r.err.find("cannot resume") != std::string::npos);
  CHECK(sandbox_state(tb, paused) == "paused");
  r = tb.run({"resume", "--id", paused});
  CHECK(r.exit_code == 75);
  tb.env.erase("TESTBOX_QUOTA");
  CHECK(tb.run({"resume", "--id", paused}).exit_code == 0);
  CHECK(tb.run({"run", "--id", paused, "--", "echo", "ran"}).out == "ran\n");
  CHECK(tb.run({"stop", "--all"}).exit_code == 0);
  (void)busy;
}

TEST_CASE("--idle reaches the provider for a kept sandbox, and is refused where it cannot apply") {
  Testbox tb;
  auto r = tb.run({"run", "--provider", "testbox", "--keep", "--idle", "pause", "--", "true"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string lease = tb.claims().front().stem().string();
  CHECK(read_file(tb.boxes / ("tb-" + lease) / "idle") == "pause");

  r = tb.run({"run", "--provider", "testbox", "--idle", "pause", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("--idle applies to a sandbox that is kept") != std::string::npos);
  r = tb.run({"run", "--provider", "testbox", "--keep", "--idle", "stop", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(r.err.find("cannot stop a sandbox once it is idle") != std::string::npos);
  CHECK(r.err.find("--idle pause") != std::string::npos);
  r = tb.run({"run", "--id", lease, "--idle", "pause", "--", "true"});
  CHECK(r.exit_code == 64);
  CHECK(tb.live() == 1);

  // The config's default applies where the provider can, and is no reason to refuse elsewhere.
  tb.root().write("config/corral/config.yaml", "idle: pause\n");
  r = tb.run({"run", "--provider", "testbox", "--keep", "--", "true"});
  CHECK(r.exit_code == 0);
  CHECK(tb.live() == 2);
  r = tb.run({"run", "--keep", "--", "true"});  // local: no idle action
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  tb.root().write("config/corral/config.yaml", "idle: sleep\n");
  r = tb.run({"run", "--", "true"});
  CHECK(r.exit_code == 78);
  CHECK(r.err.find("'idle' must be pause or stop") != std::string::npos);
  fs::remove(tb.root().path() / "config/corral/config.yaml");
  CHECK(tb.run({"stop", "--all"}).exit_code == 0);
}

TEST_CASE("a local fork copies links as links and skips FIFOs: it never follows or waits on what the command planted") {
  CliEnv env;
  env.root().write("work/file.txt", "synced");
  REQUIRE(env.run({"run", "--keep", "--", "sh", "-c",
                   "ln -s /etc/passwd host-link; mkfifo pipe; ln -s .. up; mkdir -p d; echo x > d/f; chmod 500 d"})
              .exit_code == 0);
  const std::string source = env.only_lease();
  auto r = env.run({"fork", "--id", source, "--count", "1", "--lease-output",
                    (env.root().path() / "fork.json").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string fork = handle_leases(env.root().path() / "fork.json", "forks").front();
  r = env.run({"run", "--id", fork, "--", "sh", "-c",
               "readlink host-link; readlink up; test -e pipe || echo no-pipe; cat d/f; stat -c %a d"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "/etc/passwd\n..\nno-pipe\nx\n500\n");
  CHECK(env.run({"stop", "--all"}).exit_code == 0);
  CHECK(env.local_sandboxes().empty());
}
