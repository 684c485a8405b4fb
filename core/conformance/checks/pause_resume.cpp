// Checks of pause-resume: a paused sandbox says so (to get and to list), and a run resumes it as it was.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "base/printable.hpp"
#include "corral/wire.hpp"

namespace corral::conformance {

namespace {

void pause_resume(CheckContext& cx) {
  const std::string lease = cx.kept_lease();
  cx.kit.run({.shell = "echo before the pause > paused.txt", .lease = lease}).expect_exit(0);
  Sandbox paused = cx.kit.with_lease(lease, Lease::Access::exclusive, [](Lease& l) { return l.pause(); });
  if (paused.state != "paused") fail(fmt::format("pause answered state {}, not \"paused\"", literal(paused.state)));
  auto state_now = [&] {
    return cx.kit.with_session([&](ProviderSession& s) { return s.get(cx.kept_sandbox).state; });
  };
  if (std::string now = state_now(); now != "paused")
    fail(fmt::format("get after pause says state {}, not \"paused\"", literal(now)));
  // `stop --orphans` and `list` find sandboxes through list: one it leaves out while
  // paused would outlive every cleanup.
  if (cx.spec.features.has(Feature::cleanup)) {
    std::vector<Sandbox> listed = cx.kit.with_session(
        [&](ProviderSession& s) { return s.list({{wire::kOwnerLabel, wire::kOwnerValue}}); });
    auto it = std::find_if(listed.begin(), listed.end(), [&](const Sandbox& s) { return s.id == cx.kept_sandbox; });
    if (it == listed.end())
      fail(fmt::format("list left out the paused sandbox {} ({} listed): corral stop --orphans would never find it; "
                       "list must return paused sandboxes too",
                       printable(cx.kept_sandbox), listed.size()));
    if (!it->state.empty() && it->state != "paused")
      fail(fmt::format("list says the paused sandbox's state is {}, not \"paused\"", literal(it->state)));
  }
  // A run in a paused lease resumes it first; its files are as they were.
  Observed again = cx.kit.run({.shell = "cat paused.txt", .lease = lease});
  again.expect_exit(0);
  again.expect_out("before the pause\n");
  if (std::string now = state_now(); now == "paused") fail("the sandbox is still paused after a run resumed it");
}

}  // namespace

std::vector<CheckDef> pause_resume_checks() {
  using F = Feature;
  return {
      {"pause-resume", "a paused sandbox says so to get and list, and a run resumes it with its files as they were",
       {F::run_session, F::pause_resume}, {}, &pause_resume},
  };
}

}  // namespace corral::conformance
