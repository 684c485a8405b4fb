// The claims of warm pools as the pool units handle them (pool.cpp, pool_fill.cpp): a
// pool's folder of lock files, its pooled claims, one locked and read again, one
// discarded. Not for use outside core/lease.
//
// Threads and processes: as pool.hpp.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lease/lease.hpp"

namespace corral {

// The folder of the pools' lock files and the refills' log, beside the claims, made
// private when missing (it names workspaces and provider options).
std::filesystem::path ensure_pools_dir(const ClaimStore& claims);
// The same without making it.
std::filesystem::path pools_dir(const ClaimStore& claims);

// The pooled claims of pool `key`.
std::vector<Claim> pooled_claims(const ClaimStore& claims, const std::string& key);

// A pooled claim locked by this process and read again under the lock.
struct LockedPooled {
  LeaseLock lock;
  Claim claim;
};

// `lease_id`'s claim, locked and read again, when it still belongs to pool `key` ("" =
// to any pool). nullopt when another process holds it (then `busy` is set) or when it is
// no longer pooled: taken by a run meanwhile, or gone (the lock file this try made is
// removed, under the lock).
std::optional<LockedPooled> lock_pooled(const ClaimStore& claims, const std::string& lease_id,
                                        const std::string& key, bool* busy = nullptr);

// Destroys the sandbox of `lease` (gone counts as destroyed) and forgets it, saying `why`;
// a failure is a warning: the claim stays, for `stop --orphans`.
void discard(LeaseContext& ctx, Lease& lease, const char* why);

}  // namespace corral
