#include "lease/pool_fill.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "lease/network_policy.hpp"
#include "lease/pool_claims.hpp"
#include "workspace/packed_workspace.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

// An exclusive lock on one pool's lock file, waiting for another fill of the pool;
// released when the descriptor closes (or the process dies).
LeaseLock lock_pool(const ClaimStore& claims, const std::string& key, Ui& ui) {
  return os::FileLock::acquire(ensure_pools_dir(claims) / (key + ".lock"), "pool " + key,
                               {[&ui] { ui.note("waiting for another corral filling this pool"); },
                                [&ui] { return ui.cancelled(); }});
}

// Removes the expired sandboxes of pool `key` that nobody holds.
void remove_expired(LeaseContext& ctx, const std::string& key, const ProviderChoice& choice) {
  const std::int64_t now = unix_now();
  for (const Claim& c : pooled_claims(ctx.claims, key)) {
    if (!pool_expired(*c.pool, now)) continue;
    std::optional<LockedPooled> held = lock_pooled(ctx.claims, c.lease_id, key);
    if (!held) continue;
    Lease lease = Lease::adopt_pooled(ctx, std::move(held->claim), std::move(held->lock), choice);
    discard(ctx, lease, "expired");
  }
}

// Makes one pooled sandbox of `ref` synced with `packed` (`ws` packed; null for a provider
// that mounts the tree), tagged `tag`, paused where the provider can, and bounded as a run
// under --max-workspace `max_workspace` would make it. A sandbox that cannot be made ready
// is destroyed again.
void make_pooled(LeaseContext& ctx, const PoolRef& ref, const PoolTag& tag, const Workspace& ws,
                 const PackedArchive* packed, std::uint64_t max_workspace) {
  // Tagged in the claim create writes: a filler killed from then on leaves a sandbox
  // pooled until its expiry, then abandoned; a run that takes one never synced syncs it whole.
  // A fill (often a detached refill nobody watches) waits for a slot a bounded time, not
  // for as long as a kept sandbox holds it.
  Lease lease = Lease::create(ctx, ctx.providers.open(ref.provider, ref.choice, ctx.ui),
                              {.workspace = ws.root.string(),
                               .network = ref.network,
                               .workspace_bytes = workspace_bytes_bound(ws, max_workspace)},
                              tag,
                              std::chrono::steady_clock::now() + kCreatePatience);
  try {
    lease.sync(ws, [&ui = ctx.ui] { return ui.cancelled(); }, packed);
    if (lease.spec().features.has(Feature::pause_resume)) lease.pause();
  } catch (const Error&) {
    try {
      lease.release();
    } catch (const Error& e) {
      ctx.ui.warn(fmt::format("could not remove sandbox {} after its fill failed: {}", lease.claim().sandbox_id,
                              e.what()));
    }
    throw;
  }
}

}  // namespace

FillResult fill_pool(LeaseContext& ctx, const FillRequest& request) {
  if (request.size < 1 || request.size > kMaxPoolSize)
    throw Error(ErrorCode::invalid_argument, fmt::format("--size {} is out of range", request.size),
                fmt::format("a pool holds 1 to {} sandboxes", kMaxPoolSize));
  if (request.ttl_seconds < 1)
    throw Error(ErrorCode::invalid_argument, "--pool-ttl must be a positive duration", "e.g. --pool-ttl 1h");
  const ProviderSpec& spec = ctx.providers.spec(ctx.providers.resolve(request.choice));
  Providers::require(spec, Feature::run_session, "corral pool fill");
  const NetworkPolicy network = choose_network_policy(request.network, spec, ctx.providers.config(), ctx.ui);
  require_network_policy(spec, network, ctx.providers.registry());
  // The root names the pool; the tree is scanned only once the pool is known to need a
  // sandbox: the refills of a fan-out's shards queue here and mostly find it full.
  const PoolRef ref = pool_ref(ctx, spec.name, request.choice, network, find_workspace_root(request.cwd),
                               ctx.providers.open(spec.name, request.choice, ctx.ui)->identity());

  FillResult result;
  result.key = pool_key(ref);
  result.provider = spec.name;
  result.can_pause = spec.features.has(Feature::pause_resume);
  LeaseLock pool_lock = lock_pool(ctx.claims, result.key, ctx.ui);
  remove_expired(ctx, result.key, ref.choice);
  const std::int64_t now = unix_now();
  const std::vector<Claim> pooled = pooled_claims(ctx.claims, result.key);
  for (const Claim& c : pooled)
    if (!pool_expired(*c.pool, now)) ++result.ready_before;
  if (result.ready_before >= request.size) {
    if (request.no_refill && std::none_of(pooled.begin(), pooled.end(), [](const Claim& c) { return c.pool->no_refill; }))
      ctx.ui.warn("the pool is full already, and --no-refill marks only the sandboxes a fill makes: `corral pool "
                  "drain` it and fill it again with --no-refill");
    return result;
  }

  auto cancelled = [&ui = ctx.ui] { return ui.cancelled(); };
  const Workspace ws = scan_workspace(request.cwd, cancelled, [&](const std::string& m) { ctx.ui.warn(m); });
  if (spec.features.has(Feature::archive_sync)) check_workspace_size(ws, request.max_workspace);
  std::optional<PackedArchive> packed;
  if (uploads_archive(spec.features)) packed.emplace(pack_archive(ws, ctx.ui, cancelled));
  PoolTag tag{result.key, request.size, now, now + request.ttl_seconds, request.no_refill};
  std::int64_t ready_ms = 0;
  for (int i = result.ready_before; i < request.size; ++i) {
    if (ctx.ui.cancelled()) throw Error(ErrorCode::cancelled, "interrupted while filling the pool");
    ctx.ui.progress(fmt::format("filling the pool: sandbox {} of {}", i + 1, request.size));
    const auto started = std::chrono::steady_clock::now();
    make_pooled(ctx, ref, tag, ws, packed ? &*packed : nullptr, request.max_workspace);
    ready_ms += std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    ++result.made;
  }
  if (result.made > 0) result.ms_per_sandbox = ready_ms / result.made;
  return result;
}

DrainResult drain_pools(LeaseContext& ctx, const DrainScope& scope) {
  DrainResult result;
  std::vector<StopOutcome>& outcomes = result.outcomes;
  for (const Claim& c : ctx.claims.all()) {
    if (!c.pool || (!scope.provider.empty() && c.provider != scope.provider)) continue;
    if (scope.workspace && c.workspace != scope.workspace->string()) {
      ++result.out_of_scope;
      continue;
    }
    StopOutcome out{fmt::format("pooled {} ({})", c.slug, c.provider), std::nullopt};
    bool busy = false;
    std::optional<LockedPooled> held = lock_pooled(ctx.claims, c.lease_id, "", &busy);
    if (busy) {
      out.error = Error(ErrorCode::unavailable, "being filled or taken by a run right now",
                        "drain again once it is done");
    } else if (!held) {
      continue;  // taken by a run meanwhile: not the pool's any more
    } else {
      try {
        Lease lease = Lease::adopt_pooled(ctx, std::move(held->claim), std::move(held->lock), ProviderChoice{});
        lease.release();
      } catch (const Error& e) {
        out.error = e;
      }
    }
    outcomes.push_back(std::move(out));
  }
  return result;
}

}  // namespace corral
