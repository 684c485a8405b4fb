// The pipelined start against the stand-in E2B: the workspace is packed while the sandbox
// is being created (or, on reuse, checked), and every way out of that overlap — a failed
// create, Ctrl-C, a pack that fails — leaves no sandbox, claim or archive behind. Order of
// events is asserted, never durations: the stand-in holds a call and the test looks at
// what corral did meanwhile.
#include <doctest/doctest.h>
#include <signal.h>

#include "e2b_cli.hpp"

using namespace corral;
using namespace corral::test;

namespace {

// True once the stand-in holds a call of Faults::hold_route and, while it does, corral
// has begun to pack: a workspace archive is in its staging folder.
bool staged_while_held(E2bCli& t) {
  REQUIRE(eventually([&] { return t.server.with([](auto& st) { return st.held; }) == 1; }));
  return eventually([&] { return !t.cli.staged_archives().empty(); });
}

void release(E2bCli& t) {
  t.server.with([](auto& st) {
    st.release();
    return 0;
  });
}

// A workspace whose packing takes a while: incompressible files of `mib` MiB in all.
void add_large_files(E2bCli& t, int mib) {
  for (int i = 0; i < mib / 8; ++i) t.cli.root().write("work/data/blob" + std::to_string(i), random_bytes(8u << 20));
}

// Nothing of a run is left: no sandbox at the stand-in, no claim, no archive.
void check_nothing_left(E2bCli& t) {
  CHECK(eventually([&] { return t.alive().empty(); }));
  CHECK(t.cli.claims().empty());
  CHECK(t.cli.lease_states().empty());
  CHECK(t.cli.staged_archives().empty());
}

}  // namespace

TEST_CASE("the workspace is packed while the sandbox is being created, then uploaded and run") {
  E2bCli t;
  t.fault([](auto& f) { f.hold_route = "create"; });
  Background b =
      t.cli.start({"run", "--provider", "e2b", "--lease-output", t.handle_path(), "--", "cat", "hello.txt"});
  // Create has not answered yet: an archive exists only if packing began before it ended.
  CHECK(staged_while_held(t));
  release(t);
  CHECK(b.wait() == 0);
  CHECK(read_file(b.out) == "hello from the workspace\n");
  t.seen.push_back(read_file(b.err));
  const json::Document h = t.handle();
  // The packer's own time is reported beside the phases it overlapped.
  const json::Value& timings = h["timingsMs"];
  for (const char* phase : {"prepare", "acquire", "pack", "sync", "exec", "cleanup"}) {
    INFO(phase);
    CHECK(timings.HasMember(phase));
  }
  check_nothing_left(t);
}

TEST_CASE("a reused lease packs only a changed workspace, while its sandbox is checked") {
  E2bCli t;
  // Warmed up: no command ran in it, so its copy is the tree as synced.
  REQUIRE(t.run({"warmup", "--provider", "e2b", "--lease-output", t.handle_path()}).exit_code == 0);
  const std::string lease = json::get_string(t.handle(), "leaseId");

  SUBCASE("unchanged: nothing is packed") {
    CliResult r = t.run({"run", "-v", "--id", lease, "--lease-output", t.handle_path(), "--", "true"});
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("packing") == std::string::npos);
    CHECK(r.err.find("workspace unchanged") != std::string::npos);
    CHECK_FALSE(t.handle()["timingsMs"].HasMember("pack"));
  }
  SUBCASE("changed: packed while E2B answers for the sandbox") {
    t.cli.root().write("work/hello.txt", "changed\n");
    t.fault([](auto& f) { f.hold_route = "get"; });
    Background b = t.cli.start({"run", "--id", lease, "--", "cat", "hello.txt"});
    CHECK(staged_while_held(t));
    release(t);
    CHECK(b.wait() == 0);
    CHECK(read_file(b.out) == "changed\n");
    t.seen.push_back(read_file(b.err));
  }
  CHECK(t.cli.staged_archives().empty());
  CHECK(t.run({"stop", "--id", lease}).exit_code == 0);
  check_nothing_left(t);
}

TEST_CASE("a create that fails while a large workspace is packed stops the packer and leaves nothing") {
  E2bCli t;
  add_large_files(t, 64);
  t.fault([](auto& f) {
    f.hold_route = "create";
    f.fail_route = "create";
    f.fail_status = 500;
  });
  Background b = t.cli.start({"run", "--provider", "e2b", "--", "true"});
  REQUIRE(staged_while_held(t));  // the packer is at work
  release(t);                                                          // create now answers 500
  CHECK(b.wait() == 69);
  t.seen.push_back(read_file(b.err));
  CHECK(read_file(b.err).find("unavailable") != std::string::npos);
  check_nothing_left(t);
}

TEST_CASE("Ctrl-C while the sandbox is created and the workspace packed leaves no sandbox, claim or archive") {
  E2bCli t;
  add_large_files(t, 64);
  t.fault([](auto& f) { f.hold_route = "create"; });
  Background b = t.cli.start({"run", "--provider", "e2b", "--lease-output", t.handle_path(), "--", "true"});
  REQUIRE(staged_while_held(t));
  ::kill(b.pid, SIGINT);
  release(t);  // the sandbox is made after all: corral must delete it
  CHECK(b.wait() == 130);
  t.seen.push_back(read_file(b.err));
  CHECK(t.server.calls("kill") == 1);
  check_nothing_left(t);
}

TEST_CASE("a workspace that cannot be packed releases the sandbox created meanwhile, by the keep rules") {
  E2bCli t;
  // The staging folder is a file: the packer fails at its first step, whoever runs corral.
  t.cli.root().write("state/corral/tmp", "not a folder\n");
  SUBCASE("a plain run: released") {
    CliResult r = t.run_script("true");
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("workspace archive") != std::string::npos);
    const json::Document h = t.handle();
    CHECK_FALSE(json::get_string(h, "sandboxId").empty());  // it was created, then deleted
    CHECK(h["timingsMs"].HasMember("pack"));
    CHECK(t.server.calls("create") == 1);
    CHECK(t.alive().empty());
    CHECK(t.cli.claims().empty());
  }
  SUBCASE("--keep-on-failure: kept, as for any failure") {
    CliResult r = t.run_script("true", {"--keep-on-failure"});
    CHECK(r.exit_code != 0);
    const json::Document h = t.handle();
    CHECK(json::get_bool(h, "kept"));
    CHECK(t.alive() == std::vector<std::string>{json::get_string(h, "sandboxId")});
    CHECK(t.run({"stop", "--id", json::get_string(h, "leaseId")}).exit_code == 0);
    CHECK(t.alive().empty());
  }
}
