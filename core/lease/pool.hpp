// Warm pools (`corral pool`, and `corral run` taking from them): sandboxes created, synced
// and, where the provider can pause, paused ahead of time, so a run starts with one that
// is ready. A pooled sandbox is an ordinary claim with a pool tag (claims.hpp): its key
// names the pool (provider, the provider options given as flags, network policy,
// workspace root); each records the fingerprint it was synced with, and a run that takes
// one syncs only what changed since. A pool waits until its tag's expiry, after which
// `stop --orphans` takes its sandboxes for abandoned.
//
// Threads and processes: every function may run in several corral processes at once on
// one state folder. A fill counts and creates under the pool's lock file, so two fills
// never exceed the size; a run takes a pooled sandbox under the lease's lock by clearing
// its tag, so two runs never take the same one. A filler that dies leaves claims that
// are pooled until their expiry and abandoned after it, or (killed inside create) a
// labelled sandbox with no claim, which `stop --orphans` finds as an orphan.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lease/fleet.hpp"
#include "lease/lease.hpp"
#include "lease/run.hpp"

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

// The key of `ref`'s pool: a short hex digest of what names it.
std::string pool_key(const PoolRef& ref);
// True once `tag`'s pool time is over at Unix time `now`.
bool pool_expired(const PoolTag& tag, std::int64_t now);
// The current Unix time in seconds.
std::int64_t unix_now();

struct FillRequest {
  ProviderChoice choice;
  std::optional<NetworkPolicy> network;  // --network; nullopt = the configured default
  std::filesystem::path cwd;             // the working tree to pool sandboxes for
  int size = 1;                          // 1..kMaxPoolSize
  std::int64_t ttl_seconds = kDefaultPoolTtlSeconds;
  std::uint64_t max_workspace = 0;
};

struct FillResult {
  std::string key;
  std::string provider;
  int ready_before = 0;  // pooled and not expired when the fill took the pool's lock
  int made = 0;          // created by this fill
  bool can_pause = false;
};

// Creates, syncs and (with pause-resume) pauses sandboxes until `request`'s pool holds
// `size`, under the pool's lock (waiting for another fill of it). Expired sandboxes of
// the pool are removed first. Throws invalid-argument for a size or TTL out of range,
// unsupported for a provider without run-session, else the first creation's error
// (sandboxes already made stay pooled).
FillResult fill_pool(LeaseContext& ctx, const FillRequest& request);

// How a run that took a pooled sandbox starts the pool's refill.
struct Refill {
  std::filesystem::path exe;       // corral itself; empty = no refill
  std::uint64_t max_workspace = 0; // the run's --max-workspace, which the refill's scan keeps
};

// A ready sandbox of `ref`'s pool, taken for this process (its tag cleared under its
// lock), or nullopt when there is none. Expired or vanished ones (the provider says
// gone) are removed on the way, never returned. When the pool had any sandbox and
// `refill.exe` is set, starts `corral pool fill ...` for the pool, detached.
std::optional<Lease> take_pooled(LeaseContext& ctx, const PoolRef& ref, const Refill& refill);

// take_pooled() for a run of `request` (with `provider`, `network`, workspace `root` and
// its session's `identity`), or nullopt when the run may not use a pool: not `eligible`
// (a warmup), --no-pool, --id, or --idle (a pooled sandbox was made without it).
std::optional<Lease> take_pooled_for(LeaseContext& ctx, const RunRequest& request, bool eligible,
                                     const std::string& provider, const NetworkPolicy& network,
                                     const std::filesystem::path& root, const std::string& identity);

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
};

// Every pool with pooled claims on this machine, by provider then key.
std::vector<PoolStatus> pool_status(LeaseContext& ctx);

// Stops the pooled sandboxes (of `provider` only, when not empty) and forgets them; one
// outcome each. A sandbox being filled or taken right now is left, saying so.
std::vector<StopOutcome> drain_pools(LeaseContext& ctx, const std::string& provider);

}  // namespace corral
