#include "lease/fleet.hpp"
#include "lease/pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "corral/wire.hpp"

namespace corral {
namespace {

// Destroys the sandbox a corrupt claim names (when it can be read) and removes the file.
StopOutcome remove_corrupt(LeaseContext& ctx, const ClaimFile& file) {
  StopOutcome out{fmt::format("corrupt lease {}", file.lease_id), std::nullopt};
  try {
    // Locked first, like every lease step: two corrals removing it must not both act.
    LeaseLock lock = ctx.claims.lock(file.lease_id, {}, [&] { return ctx.ui.cancelled(); });
    // A command a run started before the claim went bad may still run (exec-concurrent).
    LeaseLock commands =
        ctx.claims.lock_commands(file.lease_id, os::LockMode::exclusive, {}, [&] { return ctx.ui.cancelled(); });
    if (!file.provider.empty() && !file.sandbox_id.empty()) {
      auto session = ctx.providers.open(file.provider, {}, ctx.ui);
      Sandbox sandbox;
      sandbox.id = file.sandbox_id;
      try {
        session->destroy(sandbox);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::not_found) throw;
      }
      out.what += fmt::format(" (sandbox {} at {})", file.sandbox_id, file.provider);
    } else {
      ctx.ui.warn(fmt::format("lease claim {} names no readable sandbox; removing the file only", file.lease_id));
    }
    ctx.claims.remove(file.lease_id);
  } catch (const Error& e) {
    out.error = e;
  }
  return out;
}

StopOutcome stop_claim(LeaseContext& ctx, const Claim& claim, const ProviderChoice& choice) {
  StopOutcome out{fmt::format("{} ({})", claim.slug, claim.provider), std::nullopt};
  try {
    Lease::attach(ctx, claim, choice, Lease::Access::exclusive).release();
  } catch (const Error& e) {
    out.error = e;
  }
  return out;
}

}  // namespace

bool lists_only_this_host(const ProviderSpec& spec) {
  return std::none_of(spec.options.begin(), spec.options.end(),
                      [](const OptionSpec& o) { return o.type == "url" || o.type == "host"; });
}

std::string_view to_string(LeaseState state) {
  switch (state) {
    case LeaseState::in_use: return "in use";
    case LeaseState::kept: return "kept";
    case LeaseState::paused: return "paused";
    case LeaseState::pooled: return "pooled";
    case LeaseState::abandoned: return "abandoned";
    case LeaseState::corrupt: return "corrupt";
  }
  return "?";
}

std::string_view to_string(RemoteOwner owner) {
  switch (owner) {
    case RemoteOwner::claimed: return "claimed here";
    case RemoteOwner::in_use: return "in use here";
    case RemoteOwner::orphan: return "orphan";
    case RemoteOwner::other_host: return "another host's";
    case RemoteOwner::unknown_host: return "unknown host";
  }
  return "?";
}

bool is_foreign(RemoteOwner owner) { return owner == RemoteOwner::other_host || owner == RemoteOwner::unknown_host; }

std::vector<LeaseRow> list_leases(const ClaimStore& claims) {
  std::vector<LeaseRow> rows;
  const std::int64_t now = unix_now();
  for (ClaimFile& f : claims.scan()) {
    LeaseRow row;
    if (!f.claim) row.state = LeaseState::corrupt;
    else if (valid_lease_id(f.lease_id) && claims.in_use(f.lease_id)) row.state = LeaseState::in_use;
    else if (f.claim->pool && !pool_expired(*f.claim->pool, now)) row.state = LeaseState::pooled;
    else if (!f.claim->kept) row.state = LeaseState::abandoned;
    else row.state = f.claim->paused ? LeaseState::paused : LeaseState::kept;
    row.file = std::move(f);
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LeaseRow& a, const LeaseRow& b) {
    if (!a.file.claim || !b.file.claim) return a.file.claim.has_value() && !b.file.claim.has_value();
    return std::tie(a.file.claim->created_at, a.file.lease_id) < std::tie(b.file.claim->created_at, b.file.lease_id);
  });
  return rows;
}

std::vector<RemoteRow> list_remote(LeaseContext& ctx, ProviderSession& session) {
  Providers::require(session.spec(), Feature::cleanup, "listing a provider's sandboxes");
  // Listed before the claims are read: a run that creates a sandbox now holds its lock
  // (checked below) before the sandbox exists, and writes its claim before unlocking.
  std::vector<Sandbox> sandboxes = session.list({{wire::kOwnerLabel, wire::kOwnerValue}});
  std::set<std::string> claimed;
  for (const ClaimFile& f : ctx.claims.scan())
    if (!f.sandbox_id.empty() && f.provider == session.spec().name) claimed.insert(f.sandbox_id);
  const std::string host = ctx.claims.host_id();
  const bool only_this_host = lists_only_this_host(session.spec());
  std::vector<RemoteRow> rows;
  for (Sandbox& s : sandboxes) {
    RemoteRow row;
    auto lease = s.labels.find(wire::kLeaseLabel);
    auto label = s.labels.find(wire::kHostLabel);
    if (claimed.count(s.id)) row.owner = RemoteOwner::claimed;
    else if (lease != s.labels.end() && valid_lease_id(lease->second) && ctx.claims.in_use(lease->second))
      row.owner = RemoteOwner::in_use;
    else if (label != s.labels.end()) row.owner = label->second == host ? RemoteOwner::orphan : RemoteOwner::other_host;
    else row.owner = only_this_host ? RemoteOwner::orphan : RemoteOwner::unknown_host;
    row.sandbox = std::move(s);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<StopOutcome> stop_all(LeaseContext& ctx) {
  std::vector<StopOutcome> outcomes;
  for (const ClaimFile& f : ctx.claims.scan())
    outcomes.push_back(f.claim ? stop_claim(ctx, *f.claim, {}) : remove_corrupt(ctx, f));
  return outcomes;
}

StopOutcome stop_lease(LeaseContext& ctx, const std::string& id, const ProviderChoice& choice) {
  if (valid_lease_id(id))
    if (auto f = ctx.claims.inspect(id); f && !f->claim) {
      StopOutcome out = remove_corrupt(ctx, *f);
      if (out.error) throw *out.error;
      return out;
    }
  Lease lease = Lease::attach(ctx, id, choice, Lease::Access::exclusive, Lease::Pooled::allow);
  StopOutcome out{fmt::format("{} ({})", lease.claim().slug, lease.claim().provider), std::nullopt};
  lease.release();
  return out;
}

std::vector<StopOutcome> stop_orphans(LeaseContext& ctx, const ProviderChoice& choice, const OrphanScope& scope) {
  const std::string provider = ctx.providers.resolve(choice);
  const std::string name = ctx.providers.spec(provider).name;
  std::vector<StopOutcome> outcomes;
  for (const LeaseRow& row : list_leases(ctx.claims)) {
    if (row.state != LeaseState::abandoned) continue;
    if (!scope.all_providers_abandoned && row.file.claim->provider != name) continue;
    StopOutcome out = stop_claim(ctx, *row.file.claim, {});
    out.what = "abandoned lease " + out.what;
    outcomes.push_back(std::move(out));
  }
  auto session = ctx.providers.open(provider, choice, ctx.ui);
  if (!session->spec().features.has(Feature::cleanup)) {
    if (!choice.provider.empty()) Providers::require(session->spec(), Feature::cleanup, "stop --orphans");
    ctx.ui.info(fmt::format("provider '{}' cannot list its sandboxes; only abandoned leases were checked", name));
    return outcomes;
  }
  for (const RemoteRow& row : list_remote(ctx, *session)) {
    bool ours = row.owner == RemoteOwner::orphan;
    if (!ours && !(is_foreign(row.owner) && scope.all_hosts)) continue;
    StopOutcome out{fmt::format("orphan sandbox {} at {}", row.sandbox.id, name), std::nullopt};
    try {
      session->destroy(row.sandbox);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::not_found) out.error = e;
    }
    outcomes.push_back(std::move(out));
  }
  return outcomes;
}

}  // namespace corral
