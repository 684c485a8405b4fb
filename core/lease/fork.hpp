// Forks (`corral fork`, `corral run --shards N --from`): copies of a kept lease's sandbox
// made by the provider's own fork, not by creating and uploading again, each a lease of
// its own with its own claim, so `run --id`, `status` and `stop` treat it like any other.
//
// Threads: fork_lease() is called from one thread, with the source lease it holds; it
// writes claims other threads and processes may read (claims.hpp).
#pragma once

#include <vector>

#include "lease/lease.hpp"

namespace corral {

constexpr int kMaxForks = 64;

struct ForkOptions {
  int count = 1;  // 1..kMaxForks
  // Whether the forks' claims are kept leases (`corral fork`) or a run's own, removed by
  // the run and left as abandoned if corral dies (`run --shards --from`).
  bool kept = true;
  // When some forks fail, or the user stops corral after the provider made them: keep the
  // ones made (--keep) rather than destroying them.
  bool keep_partial = false;
  // Hand each fork's lock to the caller (Forks::locks) instead of letting go of it: a fork
  // made for a run waits not kept, and unlocked it would look abandoned to `stop
  // --orphans`. A caller that holds them must not attach() to the forks (it would wait
  // for itself); Lease::adopt() takes a held lock over.
  bool keep_locked = false;
};

struct Forks {
  std::vector<Claim> made;    // one claim per fork made, in the order asked
  std::vector<LeaseLock> locks;  // with keep_locked: the lock of each of `made`, by index
  std::vector<Error> failed;  // why the others were not made (only with keep_partial)
};

// Makes `options.count` forks of `source`'s sandbox, `source` held exclusively. Each fork
// is recorded in a claim before this returns, with the source's workspace, fingerprint,
// synced files and network policy (its files are the source's). Without keep_partial, a
// fork that fails destroys the others and its error is thrown. Throws unsupported without
// the fork feature, invalid-argument for a count outside 1..kMaxForks, cancelled when the
// user stopped the provider's call (which leaves no fork) or stopped corral after it
// (the forks destroyed unless keep_partial).
Forks fork_lease(LeaseContext& ctx, Lease& source, const ForkOptions& options);

}  // namespace corral
