// Warm pools: sandboxes created, synced and, where the provider can pause, paused ahead
// of time, so a run starts with one that is ready. A pooled sandbox is an ordinary claim
// with a pool tag (claims.hpp): its key names the pool (provider, the provider options
// the session is opened with, the session's identity, network policy, workspace root);
// each records the fingerprint it was synced with, and a run that takes one syncs only
// what changed since. A pool waits until its tag's expiry, after which `stop --orphans`
// takes its sandboxes for abandoned. This unit names pools, takes from them and counts
// them; filling and draining sit above the run and the fleet (pool_fill.hpp).
//
// Threads and processes: every function may run in several corral processes at once on
// one state folder. A run takes a pooled sandbox under the lease's lock by clearing its
// tag, so two runs never take the same one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lease/lease.hpp"

namespace corral {

constexpr int kMaxPoolSize = 32;
constexpr std::int64_t kDefaultPoolTtlSeconds = 3600;

// What names a pool.
struct PoolRef {
  std::string provider;        // the provider's name (resolved)
  ProviderChoice choice;       // as given: the refill is started with its option flags
  StringMap options;           // the options it is opened with, secrets left out: part of the key
  NetworkPolicy network;
  std::filesystem::path root;  // the workspace root
  std::string identity;        // who the provider's sessions work for (ProviderSession::identity)
};

// The pool a sandbox of `provider` made with `choice`, `network` and workspace `root` by a
// session of `identity` belongs to.
PoolRef pool_ref(LeaseContext& ctx, const std::string& provider, const ProviderChoice& choice,
                 const NetworkPolicy& network, const std::filesystem::path& root, const std::string& identity);
// The key of `ref`'s pool: a short hex digest of what names it.
std::string pool_key(const PoolRef& ref);
// True once `tag`'s pool time is over at Unix time `now`.
bool pool_expired(const PoolTag& tag, std::int64_t now);
// The current Unix time in seconds.
std::int64_t unix_now();

// What a refill of a pool must make: the pool back to `size`, with what it was filled with.
struct PoolRefill {
  PoolRef pool;
  int size = 1;
  std::int64_t ttl_seconds = kDefaultPoolTtlSeconds;
  std::uint64_t max_workspace = 0;  // the bound the taking run's scan kept
};
// Starts a refill of a pool without waiting for it (a front end's: a process of its own
// that outlives the run). Throws Error when it cannot start one.
using RefillFn = std::function<void(const PoolRefill&)>;

// A ready sandbox of `ref`'s pool, taken for this process (its tag cleared under its
// lock), or nullopt when there is none. Expired or vanished ones (the provider says
// gone) are removed on the way, never returned. When the pool had any sandbox and
// `refill` is set, asks it to refill the pool (with `max_workspace`); a refill that
// cannot start is a warning.
std::optional<Lease> take_pooled(LeaseContext& ctx, const PoolRef& ref, const RefillFn& refill,
                                 std::uint64_t max_workspace);

struct PoolStatus {
  std::string key;
  std::string provider;
  std::string workspace;
  NetworkPolicy network;
  int size = 0;       // as the newest fill asked
  int ready = 0;      // pooled, not expired, not being filled or taken
  int busy = 0;       // pooled, locked by a fill or a run right now
  int expired = 0;    // past its pool time, nobody holding it: `stop --orphans` removes it
  std::int64_t oldest_seconds = 0;
  double sandbox_minutes = 0;  // summed over the pool's sandboxes since their fill
  double running_minutes = 0;  // the part of it not paused
  bool can_pause = false;      // the provider has pause-resume
  bool refills = true;         // false once a fill said --no-refill
};

// Every pool with pooled claims on this machine, by provider then key.
std::vector<PoolStatus> pool_status(LeaseContext& ctx);

}  // namespace corral
