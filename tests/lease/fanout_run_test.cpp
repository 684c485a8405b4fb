// The fan-out in-process: shards run the run's phases on threads of their own, with one
// packed workspace, distinct slugs, their own variables, and a bound on creations at once.
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "lease/fanout.hpp"
#include "lease/fork.hpp"
#include "lease_kit.hpp"

using corral::test::LeaseKit;
using namespace corral;

namespace {

// A fan-out of `shards` runs of the kit's request.
FanoutRequest fanout(const LeaseKit& kit, int shards, int max_parallel) {
  FanoutRequest f;
  f.run = kit.request();
  f.run.command.argv = {"run-tests", "--part={shard}/{shards}"};
  f.shards = shards;
  f.max_parallel = max_parallel;
  return f;
}

}  // namespace

TEST_CASE("shards get a sandbox, a slug and variables each, one packed workspace, and at most M creations at once") {
  LeaseKit kit;
  // Creations that take a moment, so shards that were let through at once would overlap.
  kit.cloud.at("create", [](const sdk::Host&) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
  FanoutRequest f = fanout(kit, 6, 2);
  std::mutex mutex;
  std::map<int, int> acquired;  // times on_acquired came, by shard
  f.on_acquired = [&](int index, const SessionHandle&) {
    std::lock_guard guard(mutex);
    ++acquired[index];
  };
  FanoutResult r = run_fanout(kit.ctx, f);
  CHECK(r.exit_code == 0);
  REQUIRE(r.shards.size() == 6);
  std::set<std::string> slugs, leases;
  for (const ShardOutcome& s : r.shards) {
    CHECK(s.started);
    REQUIRE(s.result.handle);
    slugs.insert(s.result.handle->slug);
    leases.insert(s.result.handle->lease_id);
  }
  CHECK(slugs.size() == 6);
  CHECK(leases.size() == 6);
  CHECK(acquired == std::map<int, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}});
  CHECK(kit.cloud.most_creating_at_once() <= 2);

  std::set<std::string> parts;
  for (const Command& c : kit.cloud.commands()) {
    const std::string index = c.env.at("CORRAL_SHARD_INDEX");
    CHECK(c.env.at("CORRAL_SHARD_COUNT") == "6");
    CHECK(c.argv == std::vector<std::string>{"run-tests", "--part=" + index + "/6"});
    parts.insert(index);
  }
  CHECK(parts == std::set<std::string>{"0", "1", "2", "3", "4", "5"});
  std::set<std::string> archives;
  for (const UploadRequest& u : kit.cloud.uploads()) archives.insert(u.archive_path);
  CHECK(kit.cloud.uploads().size() == 6);
  CHECK(archives.size() == 1);  // packed once, uploaded to every shard

  CHECK(kit.cloud.boxes().empty());
  CHECK(kit.leases().empty());
  CHECK(kit.claim_folder().empty());
}

TEST_CASE("Ctrl-C while shards wait for a creation slot: none of them creates, and nothing is left") {
  LeaseKit kit;
  kit.cloud.at("create", [&](const sdk::Host&) { kit.ui.stop = true; });
  FanoutResult r = run_fanout(kit.ctx, fanout(kit, 4, 1));
  CHECK(r.exit_code == 130);
  CHECK(kit.cloud.count("create") == 1);
  CHECK(kit.cloud.count("exec") == 0);
  int started = 0;
  for (const ShardOutcome& s : r.shards) {
    REQUIRE(s.result.error);
    CHECK(s.result.error->code() == ErrorCode::cancelled);
    started += s.started ? 1 : 0;
  }
  CHECK(started == 1);
  CHECK(kit.cloud.boxes().empty());
  CHECK(kit.leases().empty());
  CHECK(kit.claim_folder().empty());
}

TEST_CASE("--fail-fast: the first shard that fails stops the others, which are cleaned up as stopped") {
  LeaseKit kit;
  // Shard 0 fails at once; the others run until they are told to stop.
  kit.cloud.on_exec([](const Command& c, const sdk::Host& host) -> int {
    if (c.env.at("CORRAL_SHARD_INDEX") == "0") return 3;
    while (!host.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    throw Error(ErrorCode::cancelled, "the command was stopped");
  });
  FanoutRequest f = fanout(kit, 3, 3);
  f.fail_fast = true;
  FanoutResult r = run_fanout(kit.ctx, f);
  CHECK(r.exit_code == 3);
  REQUIRE(r.shards.size() == 3);
  CHECK_FALSE(r.shards[0].stopped);
  for (int i : {1, 2}) {
    CAPTURE(i);
    // Stopped while running, or before its sandbox existed: cancelled either way.
    CHECK(r.shards[static_cast<size_t>(i)].stopped);
  }
  CHECK(kit.cloud.boxes().empty());
  CHECK(kit.leases().empty());
}

TEST_CASE("forks made for a fan-out stay locked from the fork until their shards take them over") {
  LeaseKit kit;
  const SessionHandle source = kit.kept_lease();
  std::vector<std::string> ids;
  {
    Lease lease = Lease::attach(kit.ctx, source.lease_id, kit.request().choice, Lease::Access::exclusive);
    Forks forks = fork_lease(kit.ctx, lease, {.count = 2, .kept = false, .keep_partial = false, .keep_locked = true});
    REQUIRE(forks.made.size() == 2);
    REQUIRE(forks.locks.size() == 2);
    for (const Claim& c : forks.made) {
      ids.push_back(c.lease_id);
      // Not kept: unlocked, `stop --orphans` would take it for abandoned.
      CHECK(kit.claims.in_use(c.lease_id));
    }
  }
  for (const std::string& id : ids) CHECK_FALSE(kit.claims.in_use(id));  // let go with `forks`
  {
    // Without keep_locked (`corral fork`, the conformance kit) the forks are free at once.
    Lease lease = Lease::attach(kit.ctx, source.lease_id, kit.request().choice, Lease::Access::exclusive);
    Forks forks = fork_lease(kit.ctx, lease, {.count = 1, .kept = false, .keep_partial = false});
    REQUIRE(forks.made.size() == 1);
    CHECK(forks.locks.empty());
    CHECK_FALSE(kit.claims.in_use(forks.made[0].lease_id));
    ids.push_back(forks.made[0].lease_id);
  }

  // Through the fan-out: each shard takes its fork's held lock (waiting for it would never
  // end), runs in it, and releases it; the source is left as it was.
  FanoutRequest f = fanout(kit, 3, 1);
  f.from = source.lease_id;
  FanoutResult r = run_fanout(kit.ctx, f);
  CHECK(r.exit_code == 0);
  std::set<std::string> ran;
  for (const ShardOutcome& s : r.shards) {
    CHECK(s.started);
    REQUIRE(s.result.handle);
    CHECK(s.result.handle->reused);
    ran.insert(s.result.handle->lease_id);
  }
  CHECK(ran.size() == 3);
  CHECK(ran.count(source.lease_id) == 0);
  CHECK(kit.cloud.count("fork") == 3);
  std::vector<Claim> left = kit.leases();
  REQUIRE(left.size() == 4);  // the source and the three forks the first part let go of
}
