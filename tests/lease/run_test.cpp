// run() and warmup() in-process: the keep rules, reuse with an exact sync, cancellation at
// each phase, and the session handle on every path, against the fake provider.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "lease_kit.hpp"

namespace fs = std::filesystem;
using corral::test::FakeCloud;
using corral::test::LeaseKit;
using namespace corral;

namespace {

using Strings = std::vector<std::string>;

// The threads this process has now.
std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& task : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// The phases the handle timed, in order.
Strings phases_of(const SessionHandle& h) {
  Strings out;
  for (const PhaseTiming& t : h.timings) out.push_back(t.phase);
  return out;
}

// An exec that plays the user's Ctrl-C while the command runs, then stops as a plugin
// must: once the host says so, with cancelled.
FakeCloud::Exec ctrl_c_during_command(LeaseKit& kit) {
  return [&kit](const Command&, const sdk::Host& host) -> int {
    host.emit(CORRAL_STDOUT, "started\n");
    kit.ui.stop = true;
    while (!host.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    throw Error(ErrorCode::cancelled, "the command was stopped");
  };
}

// An exec whose command exits with `code`.
FakeCloud::Exec exits(int code) {
  return [code](const Command&, const sdk::Host&) { return code; };
}

// Runs `request`, expecting it to throw before anything was acquired; the error's code.
ErrorCode refused(LeaseKit& kit, const RunRequest& request) {
  try {
    run(kit.ctx, request);
  } catch (const Error& e) {
    return e.code();
  }
  FAIL("the run was not refused");
  return ErrorCode::internal;
}

}  // namespace

TEST_CASE("a run creates a sandbox, syncs the tree, runs the command and releases the sandbox") {
  LeaseKit kit;
  const std::size_t threads = thread_count();
  RunResult r = run(kit.ctx, kit.request());
  CHECK(thread_count() == threads);  // the packer that overlapped create is gone with the run
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.error);
  REQUIRE(r.handle);
  const std::string id = r.handle->sandbox_id;
  CHECK(kit.cloud.calls() == Strings{"create", "upload " + id, "exec " + id, "destroy " + id});
  CHECK(kit.ui.stdout_text() == "ran\n");
  CHECK(kit.cloud.commands().at(0).argv == Strings{"make", "test"});
  CHECK_FALSE(r.handle->kept);
  CHECK_FALSE(r.handle->reused);
  CHECK(r.handle->exit_code == 0);
  CHECK(phases_of(*r.handle) == Strings{"prepare", "acquire", "pack", "sync", "exec", "cleanup"});
  CHECK(kit.cloud.boxes().empty());
  CHECK(kit.leases().empty());
  CHECK(kit.claim_folder().empty());  // no lock or file list outlives the lease
}

TEST_CASE("the keep rules: --keep keeps, --keep-on-failure keeps only a failed run's sandbox") {
  LeaseKit kit;
  RunRequest request = kit.request();
  bool kept = false;
  int exit_code = 0;
  SUBCASE("neither, the command passing") {}
  SUBCASE("neither, the command failing") {
    kit.cloud.on_exec(exits(3));
    exit_code = 3;
  }
  SUBCASE("--keep, the command passing") {
    request.keep = true;
    kept = true;
  }
  SUBCASE("--keep, the command failing") {
    request.keep = true;
    kit.cloud.on_exec(exits(3));
    kept = true;
    exit_code = 3;
  }
  SUBCASE("--keep-on-failure, the command passing") { request.keep_on_failure = true; }
  SUBCASE("--keep-on-failure, the command failing") {
    request.keep_on_failure = true;
    kit.cloud.on_exec(exits(3));
    kept = true;
    exit_code = 3;
  }
  SUBCASE("--keep-on-failure, the provider failing the exec") {
    request.keep_on_failure = true;
    kit.cloud.fail("exec", Error(ErrorCode::unavailable, "the fake is down"));
    kept = true;
    exit_code = 69;
  }
  SUBCASE("--keep-on-failure, Ctrl-C during the command") {
    request.keep_on_failure = true;
    kit.cloud.on_exec(ctrl_c_during_command(kit));
    kept = true;
    exit_code = 130;
  }
  RunResult r = run(kit.ctx, request);
  CHECK(r.exit_code == exit_code);
  REQUIRE(r.handle);
  CHECK(r.handle->kept == kept);
  CHECK(kit.cloud.count("destroy") == (kept ? 0 : 1));
  CHECK(kit.cloud.boxes().size() == (kept ? 1u : 0u));
  std::vector<Claim> leases = kit.leases();
  REQUIRE(leases.size() == (kept ? 1u : 0u));
  if (kept) CHECK(leases[0].kept);
}

TEST_CASE("a reused lease is never stopped by run, whatever happens in it") {
  LeaseKit kit;
  const SessionHandle first = kit.kept_lease();
  RunRequest again = kit.request();
  again.lease = first.slug;
  int exit_code = 0;
  SUBCASE("the command passing") {}
  SUBCASE("the command failing") {
    kit.cloud.on_exec(exits(3));
    exit_code = 3;
  }
  SUBCASE("the provider failing the exec") {
    kit.cloud.fail("exec", Error(ErrorCode::unavailable, "the fake is down"));
    exit_code = 69;
  }
  SUBCASE("Ctrl-C during the command") {
    kit.cloud.on_exec(ctrl_c_during_command(kit));
    exit_code = 130;
  }
  RunResult r = run(kit.ctx, again);
  CHECK(r.exit_code == exit_code);
  REQUIRE(r.handle);
  CHECK(r.handle->reused);
  CHECK(r.handle->kept);
  CHECK(r.handle->lease_id == first.lease_id);
  CHECK(kit.cloud.count("destroy") == 0);
  CHECK(kit.cloud.boxes().size() == 1);
  REQUIRE(kit.leases().size() == 1);
  CHECK(kit.leases()[0].kept);
}

TEST_CASE("reuse syncs exactly: what was deleted locally is removed, an unchanged tree is not uploaded again") {
  LeaseKit kit;
  // Warmed up, so no command has run in it: the sandbox's copy is the tree as synced.
  const SessionHandle first = warmup(kit.ctx, kit.request());
  REQUIRE(kit.cloud.uploads().size() == 1);
  CHECK(kit.cloud.uploads()[0].removed.empty());
  REQUIRE(kit.leases().size() == 1);
  CHECK_FALSE(kit.leases()[0].ran_since_sync);
  RunRequest again = kit.request();
  again.lease = first.lease_id;

  REQUIRE(run(kit.ctx, again).exit_code == 0);
  CHECK(kit.cloud.uploads().size() == 1);
  CHECK(kit.ui.said("workspace unchanged since the last sync; not uploading"));
  REQUIRE(kit.leases().size() == 1);
  CHECK(kit.leases()[0].ran_since_sync);  // marked when the command started

  fs::remove(kit.work() / "b.txt");
  kit.root.write("work/c.txt", "c");
  REQUIRE(run(kit.ctx, again).exit_code == 0);
  REQUIRE(kit.cloud.uploads().size() == 2);
  CHECK(kit.cloud.uploads()[1].removed == Strings{"b.txt"});

  kit.root.write("work/a.txt", "changed");
  REQUIRE(run(kit.ctx, again).exit_code == 0);
  REQUIRE(kit.cloud.uploads().size() == 3);
  CHECK(kit.cloud.uploads()[2].removed.empty());  // b.txt went with the upload before
}

TEST_CASE("a command that ran in a kept sandbox makes the next run send the unchanged tree again") {
  LeaseKit kit;
  const SessionHandle first = kit.kept_lease();
  REQUIRE(kit.cloud.uploads().size() == 1);
  REQUIRE(kit.leases().size() == 1);
  CHECK(kit.leases()[0].ran_since_sync);
  RunRequest again = kit.request();
  again.lease = first.lease_id;

  // The command may have edited or deleted the tracked files there: nothing here changed,
  // and the tree goes again all the same, over what the sandbox holds.
  REQUIRE(run(kit.ctx, again).exit_code == 0);
  REQUIRE(kit.cloud.uploads().size() == 2);
  CHECK(kit.cloud.uploads()[1].removed.empty());
  CHECK_FALSE(kit.ui.said("workspace unchanged since the last sync; not uploading"));
  CHECK(kit.ui.said("workspace unchanged here, but a command ran in the sandbox since the last sync: sending it "
                    "again, so the files it tracks are as here"));
  REQUIRE(kit.leases().size() == 1);
  CHECK(kit.leases()[0].ran_since_sync);
}

TEST_CASE("a provider that mounts the tree gets no upload, and a lease of it is reused only from that tree") {
  LeaseKit kit;
  const SessionHandle first = kit.kept_lease("mountbox");
  CHECK(kit.cloud.count("upload") == 0);
  RunRequest elsewhere = kit.request("mountbox");
  elsewhere.choice.provider.clear();
  elsewhere.lease = first.slug;
  kit.root.write("other/x.txt", "x");
  elsewhere.cwd = kit.root.path() / "other";
  CHECK(refused(kit, elsewhere) == ErrorCode::invalid_argument);
  CHECK(kit.cloud.count("exec") == 1);
  CHECK(kit.leases().size() == 1);  // refused, not forgotten
}

TEST_CASE("Ctrl-C before the sandbox is created: nothing is created or claimed") {
  LeaseKit kit;
  RunRequest request = kit.request();
  bool acquired = false;
  request.on_acquired = [&](const SessionHandle&) { acquired = true; };
  kit.ui.stop = true;
  CHECK(refused(kit, request) == ErrorCode::cancelled);
  CHECK(kit.cloud.calls().empty());
  CHECK_FALSE(acquired);
  CHECK(kit.leases().empty());
  CHECK(kit.claim_folder().empty());
}

TEST_CASE("Ctrl-C once the sandbox exists: the run stops there with 130, releases it and hands back its handle") {
  LeaseKit kit;
  RunRequest request = kit.request();
  request.downloads.patterns = {"report.xml"};
  Strings calls;  // what the cloud is asked up to the stop
  SUBCASE("during the create") {
    kit.cloud.at("create", [&](const sdk::Host&) { kit.ui.stop = true; });
    calls = {"create"};
  }
  SUBCASE("during the sync") {
    kit.cloud.at("upload", [&](const sdk::Host&) { kit.ui.stop = true; });
    calls = {"create", "upload"};
  }
  SUBCASE("during the command") {
    kit.cloud.on_exec(ctrl_c_during_command(kit));
    calls = {"create", "upload", "exec"};
  }
  RunResult r = run(kit.ctx, request);
  CHECK(r.exit_code == 130);
  REQUIRE(r.error);
  CHECK(r.error->code() == ErrorCode::cancelled);
  REQUIRE(r.handle);
  CHECK_FALSE(r.handle->kept);
  CHECK_FALSE(r.handle->downloads);  // no download after Ctrl-C
  Strings asked;
  for (const std::string& c : kit.cloud.calls()) asked.push_back(c.substr(0, c.find(' ')));
  calls.push_back("destroy");
  CHECK(asked == calls);
  CHECK(kit.cloud.boxes().empty());
  CHECK(kit.leases().empty());
}

TEST_CASE("a stop during the download makes the run interrupted (130); the command's outcome still decides keeping") {
  LeaseKit kit;
  RunRequest request = kit.request();
  request.downloads.patterns = {"report.xml"};
  request.keep_on_failure = true;
  kit.cloud.at("download", [&](const sdk::Host&) { kit.ui.stop = true; });
  RunResult r = run(kit.ctx, request);
  CHECK(r.exit_code == 130);
  REQUIRE(r.error);
  CHECK(std::string(r.error->what()) == "interrupted while downloading the results");
  REQUIRE(r.handle);
  CHECK(r.handle->exit_code == 0);
  CHECK(r.handle->downloads);
  CHECK(phases_of(*r.handle) == Strings{"prepare", "acquire", "pack", "sync", "exec", "download", "cleanup"});
  CHECK_FALSE(r.handle->kept);  // the command passed: --keep-on-failure has nothing to keep
  CHECK(kit.cloud.boxes().empty());
}

TEST_CASE("downloads come back on every outcome but Ctrl-C, also when the command fails") {
  LeaseKit kit;
  RunRequest request = kit.request();
  request.downloads.patterns = {"report.xml"};
  kit.cloud.on_exec(exits(2));
  RunResult r = run(kit.ctx, request);
  CHECK(r.exit_code == 2);
  CHECK(kit.cloud.count("download") == 1);
  REQUIRE(r.handle);
  REQUIRE(r.handle->downloads);
  CHECK(r.handle->downloads->missing == Strings{"report.xml"});
  CHECK(kit.ui.said("--download 'report.xml' matched nothing"));
}

TEST_CASE("the handle is there on every path once a sandbox exists, and on_acquired has it first") {
  LeaseKit kit;
  RunRequest request = kit.request();
  int exit_code = 0;
  std::optional<ErrorCode> error;
  bool kept = false;
  SUBCASE("the command passing") {}
  SUBCASE("the command failing") {
    kit.cloud.on_exec(exits(3));
    exit_code = 3;
  }
  SUBCASE("the upload failing") {
    kit.cloud.fail("upload", Error(ErrorCode::quota, "the fake's disk is full"));
    exit_code = 75;
    error = ErrorCode::quota;
  }
  SUBCASE("the exec failing") {
    kit.cloud.fail("exec", Error(ErrorCode::auth, "the fake's token expired"));
    exit_code = 77;
    error = ErrorCode::auth;
  }
  SUBCASE("the destroy failing") {
    kit.cloud.fail("destroy", Error(ErrorCode::unavailable, "the fake is down"));
    kept = true;  // still there: the handle says so, and how to stop it
  }
  std::vector<SessionHandle> early;
  Strings calls_then;
  size_t claims_then = 0;
  request.on_acquired = [&](const SessionHandle& h) {
    early.push_back(h);
    calls_then = kit.cloud.calls();
    claims_then = kit.leases().size();
  };
  RunResult r = run(kit.ctx, request);
  CHECK(r.exit_code == exit_code);
  REQUIRE(early.size() == 1);
  CHECK(calls_then == Strings{"create"});  // before anything else is done with the sandbox
  CHECK(claims_then == 1);                 // and once its claim exists
  CHECK_FALSE(early[0].kept);
  CHECK_FALSE(early[0].exit_code);
  REQUIRE(r.handle);
  CHECK(r.handle->lease_id == early[0].lease_id);
  CHECK(r.handle->sandbox_id == early[0].sandbox_id);
  CHECK(r.handle->cleanup_command == early[0].cleanup_command);
  CHECK(r.handle->kept == kept);
  if (error) {
    REQUIRE(r.handle->error);
    CHECK(r.handle->error->code() == *error);
    CHECK_FALSE(r.handle->exit_code);
  }
  if (kept) {
    REQUIRE(kit.ui.warnings().size() == 1);
    CHECK(kit.ui.warnings()[0].find(r.handle->cleanup_command) != std::string::npos);
    REQUIRE(kit.leases().size() == 1);
    CHECK_FALSE(kit.leases()[0].kept);  // abandoned: `stop --orphans` finishes the job
  } else {
    CHECK(kit.leases().empty());
    CHECK(kit.cloud.boxes().empty());
  }
}

TEST_CASE("a sandbox that cannot be created leaves no handle, no claim and no lock") {
  LeaseKit kit;
  RunRequest request = kit.request();
  bool acquired = false;
  request.on_acquired = [&](const SessionHandle&) { acquired = true; };
  kit.cloud.fail("create", Error(ErrorCode::quota, "the fake's quota is reached"));
  const std::size_t threads = thread_count();
  CHECK(refused(kit, request) == ErrorCode::quota);
  CHECK(thread_count() == threads);  // the packer started before create was stopped and joined
  CHECK_FALSE(acquired);
  CHECK(kit.leases().empty());
  CHECK(kit.claim_folder().empty());
}

TEST_CASE("a reused lease whose sandbox is gone fails as not-found, with its handle, and is not forgotten") {
  LeaseKit kit;
  const SessionHandle first = kit.kept_lease();
  kit.cloud.vanish(first.sandbox_id);
  RunRequest again = kit.request();
  again.lease = first.slug;
  RunResult r = run(kit.ctx, again);
  CHECK(r.exit_code == 66);
  REQUIRE(r.error);
  CHECK(std::string(r.error->what()).find("no longer exists") != std::string::npos);
  CHECK(r.error->hint().find(first.cleanup_command) != std::string::npos);
  REQUIRE(r.handle);
  CHECK(r.handle->reused);
  CHECK(r.handle->kept);
  CHECK(kit.cloud.count("exec") == 1);  // the first run's only
  CHECK(kit.leases().size() == 1);      // the user forgets it with the cleanup command
}

TEST_CASE("the command gets the forwarded variables beside its own, its own winning; an unset one is refused first") {
  LeaseKit kit;
  kit.env["API_TOKEN_FOR_TESTS"] = "forwarded";
  kit.env["BOTH"] = "forwarded";
  RunRequest request = kit.request();
  request.env_names = {"API_TOKEN_FOR_TESTS", "BOTH"};
  request.command.env["BOTH"] = "own";
  REQUIRE(run(kit.ctx, request).exit_code == 0);
  CHECK(kit.cloud.commands().at(0).env == StringMap{{"API_TOKEN_FOR_TESTS", "forwarded"}, {"BOTH", "own"}});

  request.env_names = {"NOT_SET_ANYWHERE"};
  CHECK(refused(kit, request) == ErrorCode::invalid_argument);
  CHECK(kit.cloud.count("create") == 1);  // the first run's only
}

TEST_CASE("warmup creates, syncs and keeps a sandbox, which a run then reuses without uploading") {
  LeaseKit kit;
  RunRequest request = kit.request();
  request.env_names = {"NOT_SET_ANYWHERE"};  // nothing runs, so nothing is forwarded
  SessionHandle h = warmup(kit.ctx, request);
  CHECK(h.kept);
  CHECK_FALSE(h.reused);
  CHECK(kit.cloud.calls() == Strings{"create", "upload " + h.sandbox_id});
  REQUIRE(kit.leases().size() == 1);
  CHECK(kit.leases()[0].kept);

  RunRequest again = kit.request();
  again.lease = h.slug;
  RunResult r = run(kit.ctx, again);
  CHECK(r.exit_code == 0);
  CHECK(kit.cloud.count("upload") == 1);
  REQUIRE(r.handle);
  CHECK(r.handle->kept);
  CHECK(kit.cloud.boxes().size() == 1);
}

TEST_CASE("a warmup that cannot finish leaves nothing behind") {
  LeaseKit kit;
  SUBCASE("the upload failing") { kit.cloud.fail("upload", Error(ErrorCode::unavailable, "the fake is down")); }
  SUBCASE("Ctrl-C during the create") {
    kit.cloud.at("create", [&](const sdk::Host&) { kit.ui.stop = true; });
  }
  try {
    warmup(kit.ctx, kit.request());
    FAIL("the warmup finished");
  } catch (const Error&) {
  }
  CHECK(kit.cloud.count("create") == 1);
  CHECK(kit.cloud.count("destroy") == 1);
  CHECK(kit.cloud.boxes().empty());
  CHECK(kit.leases().empty());
  CHECK(kit.claim_folder().empty());
}
