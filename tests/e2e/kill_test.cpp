// corral killed with SIGKILL at each phase of a run: nothing the user did not keep may
// outlive the next `corral stop --orphans`, and no claim may be left unreadable. The
// testbox plugin stops for good at a chosen point (TESTBOX_PAUSE) so the kill lands
// exactly in the phase under test.
#include <doctest/doctest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>

#include "cli.hpp"
#include "corral/json.hpp"

namespace fs = std::filesystem;
using corral::test::CliEnv;
using corral::test::eventually;

namespace {

struct Boxes : CliEnv {
  fs::path boxes = root().path() / "boxes";
  fs::path paused = root().path() / "boxes.paused";
  Boxes() {
    fs::create_directories(boxes);
    add_registry("testbox", {std::string(CORRAL_TEST_PLUGIN_DIR) + "/libcorral-testbox.so"});
    env["TESTBOX_DIR"] = boxes.string();
    root().write("work/f.txt", "synced");
  }
  size_t live() const {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(boxes)) n += e.is_directory() ? 1 : 0;
    return n;
  }

};

// Every file left in the leases folder: claims, locks, file lists.
std::vector<std::string> lease_folder(const CliEnv& env) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(env.state_dir() / "corral" / "leases", ec))
    out.push_back(e.path().filename().string());
  return out;
}

struct Phase {
  const char* name;   // the run phase the kill lands in
  const char* pause;  // where testbox stops
  size_t sandboxes;   // sandboxes left right after the kill
  bool claim;         // whether the lease's claim is left (as abandoned)
};

}  // namespace

TEST_CASE("SIGKILL at each phase: the next stop --orphans leaves nothing, and corral keeps working") {
  const Phase phases[] = {
      {"prepare", "open:before", 0, false},
      {"acquire (sandbox made, claim not yet written)", "create:after", 1, false},
      {"sync", "upload:before", 1, true},
      {"exec", "exec:before", 1, true},
      {"download", "download:before", 1, true},
      {"cleanup (sandbox destroyed, claim not yet removed)", "destroy:after", 0, true},
  };
  for (const Phase& phase : phases) {
    CAPTURE(phase.name);
    Boxes env;
    env.env["TESTBOX_PAUSE"] = phase.pause;
    auto bg = env.start({"run", "--provider", "testbox", "--download", "f.txt", "--", "true"});
    REQUIRE(eventually([&] { return fs::exists(env.paused); }));
    ::kill(bg.pid, SIGKILL);
    bg.wait();
    env.env.erase("TESTBOX_PAUSE");

    CHECK(env.live() == phase.sandboxes);
    std::vector<std::string> states = env.lease_states();
    CHECK(states.size() == (phase.claim ? 1u : 0u));
    for (const std::string& s : states) CHECK(s == "abandoned");

    auto stop = env.run({"stop", "--orphans", "--provider", "testbox"});
    INFO(stop.err);
    CHECK(stop.exit_code == 0);
    CHECK(env.live() == 0);
    CHECK(env.claims().empty());
    CHECK(env.lease_states().empty());
    // No lock or file list outlives its lease, wherever the kill landed.
    CHECK(lease_folder(env).empty());

    // The state folder is usable: a plain run works and leaves nothing.
    auto again = env.run({"run", "--provider", "testbox", "--", "cat", "f.txt"});
    CHECK(again.exit_code == 0);
    CHECK(again.out == "synced");
    CHECK(env.live() == 0);
    CHECK(env.claims().empty());
  }
}

TEST_CASE("a local create killed before its sandbox folder was complete leaves a staging folder the next listing removes at once") {
  CliEnv env;
  REQUIRE(env.run({"run", "--keep", "--", "true"}).exit_code == 0);  // the local state folder exists
  // A create builds its folder under ".new-..." locked, and renames it into place whole;
  // one SIGKILLed before the rename leaves that folder, unlocked, and it goes at once (a
  // pool filler killed mid-way must leave nothing past the pool's TTL). One still being
  // made is locked by its maker, however old.
  const fs::path local = env.state_dir() / "corral" / "local";
  const fs::path abandoned = local / ".new-0123456789";
  const fs::path in_progress = local / ".new-9876543210";
  fs::create_directories(abandoned / "workspace");
  fs::create_directories(in_progress / "workspace");
  fs::last_write_time(in_progress, fs::file_time_type::clock::now() - std::chrono::minutes(5));
  const int maker = ::open(in_progress.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(maker >= 0);
  REQUIRE(::flock(maker, LOCK_EX) == 0);
  auto r = env.run({"stop", "--orphans", "--provider", "local"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(!fs::exists(abandoned));
  CHECK(fs::exists(in_progress));  // its maker holds it: a create still under way
  CHECK(env.run({"list"}).exit_code == 0);
  ::close(maker);
  fs::remove_all(in_progress);
}

TEST_CASE("SIGKILL during a local command: bubblewrap takes the command down with corral") {
  CliEnv env;  // the local provider, the default
  env.root().write("work/f.txt", "synced");
  // A command line no other process has, to find the jailed process by.
  const std::vector<std::string> command = {"sleep", "3599.25"};
  auto bg = env.start({"run", "--", "sh", "-c", "echo started; exec sleep 3599.25"});
  REQUIRE(eventually([&] { return corral::test::read_file(bg.out) == "started\n"; }));
  REQUIRE(eventually([&] { return corral::test::processes_running(command).size() == 1; }));
  const int jailed = corral::test::processes_running(command).front();
  ::kill(bg.pid, SIGKILL);
  bg.wait();

  // --die-with-parent: bwrap dies with corral, and the jail's pid namespace with it.
  CHECK(corral::test::gone_within(jailed, std::chrono::seconds(15)));
  CHECK(corral::test::processes_running(command).empty());
  for (int pid : corral::test::processes_running(command)) ::kill(pid, SIGKILL);  // never leave it running

  // What the kill left (the lease, its folder) is the next stop --orphans' to remove.
  REQUIRE(env.claims().size() == 1);
  auto stop = env.run({"stop", "--orphans"});
  INFO(stop.err);
  CHECK(stop.exit_code == 0);
  CHECK(env.claims().empty());
  CHECK(env.local_sandboxes().empty());
}

TEST_CASE("stops racing a run on one lease leave no lock file behind") {
  Boxes env;
  auto keep = env.run({"run", "--provider", "testbox", "--keep", "--", "true"});
  REQUIRE_MESSAGE(keep.exit_code == 0, keep.err);
  REQUIRE(env.claims().size() == 1);
  const std::string lease = env.claims().front().stem().string();
  auto running = env.start({"run", "--id", lease, "--", "sleep", "2"});
  REQUIRE(eventually([&] { return env.lease_states() == std::vector<std::string>{"in use"}; }));
  auto first = env.start({"stop", "--id", lease});
  auto second = env.start({"stop", "--id", lease});
  CHECK(running.wait() == 0);
  const int a = first.wait(), b = second.wait();
  CHECK(((a == 0 && b == 66) || (a == 66 && b == 0) || (a == 0 && b == 0)));
  CHECK(env.live() == 0);
  CHECK(lease_folder(env).empty());
}
