// Checks of run-session: a kept sandbox is reused by its slug, synced exactly, kept on
// failure; and of exec-concurrent: two runs of it at once run their commands side by side.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include <exception>
#include <thread>

#include "base/printable.hpp"

namespace corral::conformance {

namespace {

void keep_reuse(CheckContext& cx) {
  Observed first = cx.kit.run({.shell = "echo kept > state.txt", .keep = true});
  first.expect_exit(0);
  const SessionHandle& h = first.handle();
  if (!h.kept) fail("--keep did not keep the sandbox");
  cx.kept = h.lease_id;
  cx.kept_sandbox = h.sandbox_id;
  std::optional<ClaimFile> claim = cx.kit.claims().inspect(h.lease_id);
  if (!claim || !claim->claim || !claim->claim->kept) fail("the kept lease has no claim recording it as kept");
  Observed again = cx.kit.run({.shell = "cat state.txt", .lease = h.slug});
  again.expect_exit(0);
  again.expect_out("kept\n");
  if (!again.handle().reused) fail("the rerun with --id did not report reusing the sandbox");
  if (again.handle().sandbox_id != h.sandbox_id)
    fail(fmt::format("the rerun used sandbox {}, not the kept {}", again.handle().sandbox_id, h.sandbox_id));
}

void sync_deletions(CheckContext& cx) {
  const std::string lease = cx.kept_lease();
  cx.fixture.write("hello.txt", "hello again\n");
  cx.fixture.write("added.txt", "added\n");
  cx.fixture.remove("doomed.txt");
  struct Restore {
    Fixture& f;
    ~Restore() {
      f.write("hello.txt", "hello\n");
      f.write("doomed.txt", "doomed\n");
      f.remove("added.txt");
    }
  } restore{cx.fixture};
  Observed o = cx.kit.run({.shell = "echo made > made.txt", .lease = lease});
  o.expect_exit(0);
  Observed check = cx.kit.run(
      {.shell = "cat hello.txt added.txt made.txt; if [ -e doomed.txt ]; then echo doomed.txt is still there; fi",
       .lease = lease});
  check.expect_exit(0);
  check.expect_out("hello again\nadded\nmade\n");
}

void keep_on_failure(CheckContext& cx) {
  Observed failed = cx.kit.run({.shell = "exit 5", .keep_on_failure = true});
  failed.expect_exit(5);
  if (!failed.handle().kept) fail("--keep-on-failure did not keep the sandbox of a failed run");
  if (!cx.kit.claims().inspect(failed.handle().lease_id)) fail("the kept lease has no claim");
  cx.kit.stop(failed.handle().lease_id);
  Observed passed = cx.kit.run({.shell = "true", .keep_on_failure = true});
  passed.expect_exit(0);
  cx.kit.expect_cleaned_up(passed);
}

void concurrent_commands(CheckContext& cx) {
  const std::string lease = cx.kept_lease();
  // Each command marks that it runs, then waits (60 s at most: the other run may still be
  // syncing on a slow machine) for the other's mark: both end only when they ran at once.
  constexpr std::string_view waits =
      "echo > .concurrent-{0}; i=0; while [ ! -e .concurrent-{1} ]; do i=$((i+1)); [ $i -lt 600 ] || exit 9; "
      "sleep 0.1; done; echo saw-{1}";
  std::optional<Observed> second;
  std::exception_ptr second_failed;
  {
    std::jthread other([&] {
      try {
        second = cx.kit.run({.shell = fmt::format(waits, "b", "a"), .lease = lease, .timeout_seconds = 120});
      } catch (...) {
        second_failed = std::current_exception();
      }
    });
    Observed first = cx.kit.run({.shell = fmt::format(waits, "a", "b"), .lease = lease, .timeout_seconds = 120});
    other.join();
    if (second_failed) std::rethrow_exception(second_failed);
    for (const Observed* o : {&first, &*second})
      if (!o->result.error && o->result.exit_code == 9)
        fail(fmt::format("{} waited 60 s for the other command's mark: the two runs of lease {} did not run their "
                         "commands at once (a provider with exec-concurrent runs a command beside another)",
                         o->ran, lease));
    first.expect_exit(0);
    second->expect_exit(0);
    first.expect_out("saw-b\n");
    second->expect_out("saw-a\n");
  }
  cx.kit.run({.shell = "rm -f .concurrent-a .concurrent-b", .lease = lease}).expect_exit(0);
}

}  // namespace

std::vector<CheckDef> session_checks() {
  using F = Feature;
  return {
      {"keep-reuse", "a kept sandbox is reused by its slug and keeps its state", {F::run_session}, {},
       &keep_reuse},
      {"sync-deletions", "reuse syncs exactly: changes and new files arrive, deleted files go, sandbox files stay",
       {F::run_session}, {F::archive_sync, F::workspace_mount}, &sync_deletions},
      {"keep-on-failure", "--keep-on-failure keeps a failed run's sandbox and not a passing one's", {F::run_session},
       {}, &keep_on_failure},
      {"concurrent", "two runs of one kept sandbox at once run their commands side by side",
       {F::run_session, F::exec_concurrent}, {}, &concurrent_commands},
  };
}

}  // namespace corral::conformance
