// Filling and draining warm pools (pool.hpp): `corral pool fill` makes sandboxes ready,
// `corral pool drain` stops them. Above the run contract and the fleet: a fill creates,
// syncs and pauses as a run's phases do, and a drain reports as `stop` does.
//
// Threads and processes: a fill counts and creates under the pool's lock file, so two
// fills never exceed the size. A filler that dies leaves claims that are pooled until
// their expiry and abandoned after it, or (killed inside create) a labelled sandbox with
// no claim, which `stop --orphans` finds as an orphan.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lease/fleet.hpp"
#include "lease/pool.hpp"

namespace corral {

struct FillRequest {
  ProviderChoice choice;
  std::optional<NetworkPolicy> network;  // nullopt = the configured default
  std::filesystem::path cwd;             // the working tree to pool sandboxes for
  int size = 1;                          // 1..kMaxPoolSize
  std::int64_t ttl_seconds = kDefaultPoolTtlSeconds;
  std::uint64_t max_workspace = 0;
  bool no_refill = false;  // --no-refill: runs that take from the pool leave it smaller
};

struct FillResult {
  std::string key;
  std::string provider;
  int ready_before = 0;  // pooled and not expired when the fill took the pool's lock
  int made = 0;          // created by this fill
  bool can_pause = false;
  // How long each sandbox this fill made took to be ready (create and sync), on average;
  // 0 when it made none. A pool saves a run about this much.
  std::int64_t ms_per_sandbox = 0;
};

// Creates, syncs and (with pause-resume) pauses sandboxes until `request`'s pool holds
// `size`, under the pool's lock (waiting for another fill of it). Expired sandboxes of
// the pool are removed first. Throws invalid-argument for a size or TTL out of range,
// unsupported for a provider without run-session, else the first creation's error
// (sandboxes already made stay pooled).
FillResult fill_pool(LeaseContext& ctx, const FillRequest& request);

// Which pooled sandboxes a drain stops: a provider's only (empty: every one's), of the
// working tree at `workspace` only (nullopt: every tree's).
struct DrainScope {
  std::string provider;
  std::optional<std::filesystem::path> workspace;
};

// What a drain did: one outcome per pooled sandbox it stopped (or left, being filled or
// taken right now), and how many pooled sandboxes it left alone as out of its scope.
struct DrainResult {
  std::vector<StopOutcome> outcomes;
  int out_of_scope = 0;
};

// Stops the pooled sandboxes in `scope` and forgets them.
DrainResult drain_pools(LeaseContext& ctx, const DrainScope& scope);

}  // namespace corral
