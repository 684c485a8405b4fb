#include "lease/fork.hpp"

#include "base/phase_report.hpp"

#include <fmt/format.h>

#include "base/hash.hpp"
#include "base/paths.hpp"
#include "corral/wire.hpp"

namespace corral {
namespace {

// A fork being made: its claim, and the slug and lock held until the claim is written.
struct PendingFork {
  Claim claim;
  SlugHold slug;
  LeaseLock lock;
};

// The claim of a fork of `source` for a new lease, before the provider has made it.
PendingFork pending_fork(LeaseContext& ctx, const Claim& source, bool kept) {
  Claim claim = source;
  claim.lease_id = random_hex(6);
  SlugHold slug = ctx.claims.hold_new_slug();
  claim.slug = slug.slug();
  claim.sandbox_id.clear();
  claim.details.clear();
  claim.created_at = now_rfc3339();
  claim.kept = kept;
  claim.paused = false;
  claim.pool.reset();  // a fork is nobody's pool sandbox, whatever its source was
  // Locked before the fork exists, as Lease::create does: `stop --orphans` skips it.
  LeaseLock lock = ctx.claims.lock(claim.lease_id);
  return {std::move(claim), std::move(slug), std::move(lock)};
}

// Destroys the forks `made` and forgets their leases; one that cannot be destroyed keeps
// its claim, marked not kept, so `stop --orphans` removes it later.
void discard(LeaseContext& ctx, Lease& source, std::vector<Claim>& made, std::vector<Sandbox>& sandboxes) {
  for (size_t i = 0; i < made.size(); ++i) {
    try {
      source.session().destroy(sandboxes[i]);
      ctx.claims.remove(made[i].lease_id);
    } catch (const Error& e) {
      ctx.ui.warn(fmt::format("could not remove fork {} ({}): {}; `corral stop --orphans` removes it later",
                              made[i].slug, sandboxes[i].id, e.what()));
      made[i].kept = false;
      try {
        ctx.claims.write(made[i]);
      } catch (const Error&) {
      }
    }
  }
  made.clear();
  sandboxes.clear();
}

}  // namespace

Forks fork_lease(LeaseContext& ctx, Lease& source, const ForkOptions& options) {
  Providers::require(source.spec(), Feature::fork, "forking a lease", ctx.providers.having(Feature::fork));
  if (options.count < 1 || options.count > kMaxForks)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--count must be between 1 and {}, not {}", kMaxForks, options.count),
                "e.g. `corral fork --id LEASE --count 4`");
  const Claim& from = source.claim();
  const Sandbox origin = source.live();
  std::vector<PendingFork> pending;
  std::vector<ForkTarget> targets;
  for (int i = 0; i < options.count; ++i) {
    pending.push_back(pending_fork(ctx, from, options.kept));
    const Claim& c = pending.back().claim;
    targets.push_back({c.lease_id, c.slug, wire::owner_labels(c.lease_id, c.slug, ctx.claims.host_id())});
  }
  auto forget_pending = [&] {
    for (const PendingFork& p : pending) ctx.claims.remove(p.claim.lease_id);  // only lock files exist
  };
  std::vector<ForkOutcome> outcomes;
  try {
    std::vector<std::string> ids;
    for (const PendingFork& p : pending) ids.push_back(p.claim.lease_id);
    admit_new(ctx, source.spec().name, ids);
    ctx.ui.progress(fmt::format("forking lease {} into {}", from.slug, options.count));
    PhaseReport report(ctx.ui, "fork");
    outcomes = source.session().fork(origin, targets);
    report.done();
  } catch (const Error&) {
    forget_pending();
    throw;
  }

  Forks result;
  std::vector<Sandbox> sandboxes;  // of result.made, by index
  const std::vector<std::string> synced = ctx.claims.synced_files(from.lease_id);
  for (size_t i = 0; i < pending.size(); ++i) {
    Claim& claim = pending[i].claim;
    ForkOutcome& outcome = outcomes[i];
    if (!outcome.sandbox) {
      ctx.claims.remove(claim.lease_id);
      result.failed.push_back(outcome.error ? *outcome.error
                                            : Error(ErrorCode::internal, "the provider made no fork and said no why"));
      continue;
    }
    claim.sandbox_id = outcome.sandbox->id;
    claim.details = outcome.sandbox->details;
    try {
      ctx.claims.write(claim);
      ctx.claims.write_synced_files(claim.lease_id, synced);
    } catch (const Error& e) {
      // An unrecorded sandbox would be a leak: remove it before reporting.
      std::vector<Claim> one{claim};
      std::vector<Sandbox> its{*outcome.sandbox};
      discard(ctx, source, one, its);
      result.failed.push_back(e);
      continue;
    }
    result.made.push_back(claim);
    if (options.keep_locked) result.locks.push_back(std::move(pending[i].lock));
    sandboxes.push_back(*outcome.sandbox);
  }
  const bool stopped = ctx.ui.cancelled();
  if (!options.keep_partial && (stopped || !result.failed.empty())) {
    discard(ctx, source, result.made, sandboxes);
    if (stopped) throw Error(ErrorCode::cancelled, "interrupted while forking; no fork was kept");
    const Error& first = result.failed.front();
    throw Error(first.code(),
                fmt::format("{} of {} forks of lease {} failed, so none was kept: {}", result.failed.size(),
                            options.count, from.slug, first.what()),
                first.hint().empty() ? "add --keep to keep the forks that were made" : first.hint());
  }
  return result;
}

}  // namespace corral
