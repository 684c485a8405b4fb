// Checks of fork: forks are independent, and --shards --from runs each shard in one.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include "base/printable.hpp"
#include "lease/fanout.hpp"
#include "lease/fork.hpp"

namespace corral::conformance {

namespace {

void fork_independent(CheckContext& cx) {
  const std::string lease = cx.kept_lease();
  cx.kit.run({.shell = "echo source > forked.txt", .lease = lease}).expect_exit(0);
  Forks forks = cx.kit.fork(lease, 2);
  if (forks.made.size() != 2) fail(fmt::format("2 forks were asked for, {} made", forks.made.size()));
  for (const Claim& c : forks.made)
    if (c.sandbox_id == cx.kept_sandbox) fail("a fork is the source sandbox itself, " + cx.kept_sandbox);
  Observed first = cx.kit.run({.shell = "cat forked.txt; echo fork > forked.txt", .lease = forks.made[0].lease_id});
  first.expect_exit(0);
  first.expect_out("source\n");
  for (const std::string& other : {forks.made[1].lease_id, lease}) {
    Observed o = cx.kit.run({.shell = "cat forked.txt", .lease = other});
    o.expect_exit(0);
    if (o.out != "source\n")
      fail(fmt::format("a write in one fork shows in {}: it printed {}", other == lease ? "the source" : "another fork",
                       literal(o.out)));
  }
  for (const Claim& c : forks.made) {
    cx.kit.stop(c.lease_id);
    if (std::string left = cx.kit.still_there(c.sandbox_id); !left.empty()) fail(left + " after the fork was stopped");
  }
}

void shards_from(CheckContext& cx) {
  const std::string lease = cx.kept_lease();
  cx.kit.run({.shell = "echo prepared > prepared.txt; rm -f shard-made.txt", .lease = lease}).expect_exit(0);
  FanoutResult fan = cx.kit.fanout_from(lease, 2, "cat prepared.txt && echo made > shard-made.txt");
  if (fan.exit_code != 0) {
    std::vector<ShardSummary> why = fanout_summary(fan);
    fail(fmt::format("--shards 2 --from failed with exit code {}{}", fan.exit_code,
                     why.empty() ? "" : ": " + printable(why.front().text)));
  }
  for (const ShardOutcome& s : fan.shards) {
    if (!s.result.handle) fail("a shard has no session handle");
    const SessionHandle& h = *s.result.handle;
    if (h.sandbox_id == cx.kept_sandbox) fail("a shard ran in the source sandbox itself, not a fork");
    if (cx.kit.claims().inspect(h.lease_id)) fail("the fork of a shard is still claimed after the fan-out");
    if (std::string left = cx.kit.still_there(h.sandbox_id); !left.empty()) fail(left + " after the fan-out ended");
  }
  Observed source = cx.kit.run({.shell = "test ! -e shard-made.txt && cat prepared.txt", .lease = lease});
  if (source.result.exit_code != 0) fail("a shard's write shows in the source lease" + source.why());
  source.expect_out("prepared\n");
}

}  // namespace

std::vector<CheckDef> fork_checks() {
  using F = Feature;
  return {
      {"fork", "forks of a kept sandbox are independent: a write in one shows in neither the source nor another",
       {F::run_session, F::fork}, {}, &fork_independent},
      {"shards-from", "--shards --from runs each shard in a fork, removes the forks and leaves the source as it was",
       {F::run_session, F::fork}, {}, &shards_from},
  };
}

}  // namespace corral::conformance
