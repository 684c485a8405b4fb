#include "lease/pool_claims.hpp"

#include <fmt/format.h>

#include "base/paths.hpp"

namespace fs = std::filesystem;

namespace corral {

fs::path pools_dir(const ClaimStore& claims) { return claims.dir().parent_path() / "pools"; }

fs::path ensure_pools_dir(const ClaimStore& claims) {
  const fs::path dir = pools_dir(claims);
  paths::make_private_folder(dir, "folder of warm pools");
  return dir;
}

std::vector<Claim> pooled_claims(const ClaimStore& claims, const std::string& key) {
  std::vector<Claim> out;
  for (Claim& c : claims.all())
    if (c.pool && c.pool->key == key) out.push_back(std::move(c));
  return out;
}

std::optional<LockedPooled> lock_pooled(const ClaimStore& claims, const std::string& lease_id,
                                        const std::string& key, bool* busy) {
  std::optional<LeaseLock> lock = claims.try_lock(lease_id);
  if (busy) *busy = !lock;
  if (!lock) return std::nullopt;
  std::optional<Claim> fresh = claims.read(lease_id);
  if (!fresh) {
    claims.remove(lease_id);
    return std::nullopt;
  }
  if (!fresh->pool || (!key.empty() && fresh->pool->key != key)) return std::nullopt;
  return LockedPooled{std::move(*lock), std::move(*fresh)};
}

void discard(LeaseContext& ctx, Lease& lease, const char* why) {
  ctx.ui.info(fmt::format("pooled sandbox {} {}; removing it", lease.claim().slug, why));
  try {
    lease.release();
  } catch (const Error& e) {
    ctx.ui.warn(fmt::format("could not remove pooled sandbox {} ({}): {}", lease.claim().sandbox_id,
                            lease.claim().slug, e.what()));
  }
}

}  // namespace corral
