#include "lease/pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "base/hash.hpp"
#include "lease/pool_claims.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

// The options that name a pool of `provider`: what a session of `choice` is opened with,
// flags, environment and config alike (a template changed in corral.yaml is another
// pool), but its secrets: a key's digest has no business in file names.
StringMap keyed_options(LeaseContext& ctx, const std::string& provider, const ProviderChoice& choice) {
  StringMap values = ctx.providers.option_values(provider, choice);
  for (const OptionSpec& o : ctx.providers.spec(provider).options)
    if (o.secret) values.erase(o.name);
  return values;
}

// Asks `refill` to bring `ref`'s pool back to `tag`'s size, without waiting for it; one
// that cannot start is a warning: the run has its sandbox.
void start_refill(LeaseContext& ctx, const PoolRef& ref, const PoolTag& tag, const RefillFn& refill,
                  std::uint64_t max_workspace) {
  const PoolRefill wanted{ref, std::clamp(tag.size, 1, kMaxPoolSize),
                          std::max<std::int64_t>(tag.expires_at - tag.filled_at, 1), max_workspace};
  try {
    refill(wanted);
  } catch (const Error& e) {
    ctx.ui.warn(fmt::format("could not refill the pool: {}; run `corral pool fill` to refill it", e.what()));
  }
}

}  // namespace

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool pool_expired(const PoolTag& tag, std::int64_t now) { return now >= tag.expires_at; }

std::string pool_key(const PoolRef& ref) {
  Sha256 h;
  h.update(ref.provider);
  for (const auto& [name, value] : ref.options)  // a std::map: sorted
    h.update(std::string(1, '\0') + name + '=' + value);
  h.update(std::string(1, '\0') + to_string(ref.network));
  h.update(std::string(1, '\0') + ref.root.string());
  // Another account or cluster is another pool: its sandboxes are not this one's to take.
  if (!ref.identity.empty()) h.update(std::string(1, '\0') + "identity=" + ref.identity);
  return h.hex().substr(0, 16);
}

PoolRef pool_ref(LeaseContext& ctx, const std::string& provider, const ProviderChoice& choice,
                 const NetworkPolicy& network, const fs::path& root, const std::string& identity) {
  return {provider, choice, keyed_options(ctx, provider, choice), network, root, identity};
}


std::optional<Lease> take_pooled(LeaseContext& ctx, const PoolRef& ref, const RefillFn& refill,
                                 std::uint64_t max_workspace) {
  const std::string key = pool_key(ref);
  // A fill makes the pool's lock file before its first sandbox: without one, every run
  // would read every claim for nothing.
  std::error_code ec;
  if (!fs::exists(pools_dir(ctx.claims) / (key + ".lock"), ec)) return std::nullopt;
  std::vector<Claim> candidates = pooled_claims(ctx.claims, key);
  if (candidates.empty()) return std::nullopt;
  std::optional<PoolTag> seen;
  // One sandbox filled with --no-refill makes the pool one, as `pool status` says.
  const bool no_refill =
      std::any_of(candidates.begin(), candidates.end(), [](const Claim& c) { return c.pool && c.pool->no_refill; });
  std::optional<Lease> taken;
  for (const Claim& c : candidates) {
    if (taken) break;
    seen = c.pool;
    // Busy: being filled, or another run is taking it.
    std::optional<LockedPooled> held = lock_pooled(ctx.claims, c.lease_id, key);
    if (!held) continue;
    const Claim& pooled = held->claim;
    const bool expired = pool_expired(*pooled.pool, unix_now());
    // Ours from here: a run that dies now leaves an abandoned lease, not a pooled one.
    Claim mine = pooled;
    mine.pool.reset();
    // After a power loss the run is gone too; the tag coming back then is harmless.
    ctx.claims.write(mine, Durability::process_crash);
    Lease lease = Lease::adopt_pooled(ctx, std::move(mine), std::move(held->lock), ref.choice);
    if (expired) {
      discard(ctx, lease, "expired");
      continue;
    }
    try {
      lease.live();
    } catch (const Error& e) {
      if (e.code() == ErrorCode::not_found) {
        discard(ctx, lease, "no longer exists");
        continue;
      }
      // Not reached now (a network blip, an outage): the sandbox may well be fine, so it
      // goes back to the pool for a later run, and this one makes its own. The others
      // would most likely fail alike.
      ctx.claims.write(pooled, Durability::process_crash);
      ctx.ui.warn(fmt::format("could not reach pooled sandbox {} ({}): {}; leaving it in the pool", pooled.slug,
                              pooled.sandbox_id, e.what()));
      break;
    }
    taken.emplace(std::move(lease));
  }
  if (seen && no_refill)
    ctx.ui.info("the pool was filled with --no-refill: not refilling it");
  else if (seen && refill)
    start_refill(ctx, ref, *seen, refill, max_workspace);
  return taken;
}

std::vector<PoolStatus> pool_status(LeaseContext& ctx) {
  std::map<std::pair<std::string, std::string>, PoolStatus> pools;
  const std::int64_t now = unix_now();
  for (const Claim& c : ctx.claims.all()) {
    if (!c.pool) continue;
    PoolStatus& p = pools[{c.provider, c.pool->key}];
    if (p.key.empty()) {
      p.key = c.pool->key;
      p.provider = c.provider;
      p.workspace = c.workspace;
      p.network = c.network;
      try {
        p.can_pause = ctx.providers.spec(c.provider).features.has(Feature::pause_resume);
      } catch (const Error&) {
        p.can_pause = false;  // a provider no longer installed: it cannot say
      }
    }
    p.size = std::max(p.size, c.pool->size);
    if (c.pool->no_refill) p.refills = false;
    const std::int64_t age = std::max<std::int64_t>(now - c.pool->filled_at, 0);
    p.oldest_seconds = std::max(p.oldest_seconds, age);
    p.sandbox_minutes += static_cast<double>(age) / 60.0;
    if (!c.paused) p.running_minutes += static_cast<double>(age) / 60.0;
    if (ctx.claims.in_use(c.lease_id)) ++p.busy;
    else if (pool_expired(*c.pool, now)) ++p.expired;
    else ++p.ready;
  }
  std::vector<PoolStatus> out;
  for (auto& [name, status] : pools) out.push_back(std::move(status));
  return out;
}

}  // namespace corral
