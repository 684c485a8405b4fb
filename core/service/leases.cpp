#include "service/leases.hpp"

#include <ctime>

#include "lease/usage_log.hpp"

#include <fmt/ranges.h>

#include <algorithm>

#include "base/printable.hpp"
#include "base/sizes.hpp"
#include "corral/json.hpp"
#include "lease/claims.hpp"
#include "lease/fork.hpp"
#include "lease/lease.hpp"

namespace corral::service {
namespace {

// `spec`'s lease, its provider opened; `access` as Lease::attach takes it. The lease keeps
// a pointer to `ctx`, so `ctx` must outlive it: callers hold both in one frame.
Lease attach(LeaseContext& ctx, const LeaseSpec& spec, Lease::Access access,
             Lease::Pooled pooled = Lease::Pooled::refuse) {
  return Lease::attach(ctx, spec.lease, spec.provider, access, pooled);
}

void write_lease_row(json::Writer& w, const LeaseRow& row) {
  w.StartObject();
  if (row.file.claim) {
    write_claim_fields(w, *row.file.claim);
    json::write_string(w, "cleanupCommand", cleanup_command(row.file.claim->provider, row.file.lease_id));
    // Its sandbox-time so far (`corral usage` sums it).
    if (std::optional<std::int64_t> created = parse_utc_time(row.file.claim->created_at)) {
      w.Key("sandboxSeconds");
      w.Int64(std::max<std::int64_t>(0, static_cast<std::int64_t>(std::time(nullptr)) - *created));
    }
  } else {
    json::write_string(w, "leaseId", row.file.lease_id);
    json::write_string(w, "provider", row.file.provider);
    json::write_string(w, "sandboxId", row.file.sandbox_id);
    json::write_string(w, "problem", row.file.problem);
    json::write_string(w, "cleanupCommand", cleanup_command("", row.file.lease_id));
  }
  json::write_string(w, "state", to_string(row.state));
  w.EndObject();
}

void write_remote_row(json::Writer& w, const RemoteRow& r) {
  w.StartObject();
  json::write_string(w, "sandboxId", r.sandbox.id);
  json::write_string(w, "state", r.sandbox.state);
  json::write_map(w, "labels", r.sandbox.labels);
  json::write_string(w, "owner", to_string(r.owner));
  w.Key("claimed");
  w.Bool(r.owner == RemoteOwner::claimed);
  w.EndObject();
}

}  // namespace

ForkOutcome fork(Session& session, Ui& ui, const ForkSpec& spec) {
  LeaseContext ctx = session.context(ui);
  Lease source = attach(ctx, spec.source, Lease::Access::exclusive);
  Forks forks = fork_lease(ctx, source, {.count = spec.count, .kept = true, .keep_partial = spec.keep_partial});
  ForkOutcome outcome;
  for (const Claim& c : forks.made) outcome.forks.push_back(handle_for(c));
  outcome.failed = std::move(forks.failed);
  return outcome;
}

StateChange pause(Session& session, Ui& ui, const LeaseSpec& spec) {
  LeaseContext ctx = session.context(ui);
  Lease lease = attach(ctx, spec, Lease::Access::exclusive);
  Providers::require(lease.spec(), Feature::pause_resume, "corral pause");
  if (lease.paused()) return {lease.claim(), false};
  lease.pause();
  return {lease.claim(), true};
}

StateChange resume(Session& session, Ui& ui, const LeaseSpec& spec) {
  LeaseContext ctx = session.context(ui);
  Lease lease = attach(ctx, spec, Lease::Access::exclusive);
  Providers::require(lease.spec(), Feature::pause_resume, "corral resume");
  // A claim still saying paused is brought up to date by a resume all the same.
  if (!lease.paused() && !lease.claim().paused) return {lease.claim(), false};
  lease.resume();
  return {lease.claim(), true};
}

Extended extend(Session& session, Ui& ui, const LeaseSpec& spec, const std::string& by) {
  const std::int64_t seconds = parse_duration(by);
  LeaseContext ctx = session.context(ui);
  Lease lease = attach(ctx, spec, Lease::Access::observe);
  const Sandbox updated = lease.extend(seconds);
  Extended result{.claim = lease.claim(), .seconds = seconds};
  if (auto end = updated.details.find("endAt"); end != updated.details.end()) result.until = end->second;
  return result;
}

std::string url(Session& session, Ui& ui, const LeaseSpec& spec, int port) {
  LeaseContext ctx = session.context(ui);
  Lease lease = attach(ctx, spec, Lease::Access::observe);
  return printable(lease.url(port));
}

std::string only_lease(Session& session, std::string_view command) {
  std::vector<std::string> slugs;
  for (const LeaseRow& row : list_leases(session.claims()))
    if (row.file.claim && (row.state == LeaseState::kept || row.state == LeaseState::paused ||
                           row.state == LeaseState::in_use))
      slugs.push_back(row.file.claim->slug);
  if (slugs.empty())
    throw Error(ErrorCode::not_found, fmt::format("{}: there is no kept lease here to act on", command),
                "`corral run --keep -- COMMAND` keeps a sandbox; `corral list` shows the leases");
  if (slugs.size() > 1) {
    const std::size_t shown = std::min<std::size_t>(slugs.size(), 5);
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: there are {} leases; say which with --id", command, slugs.size()),
                fmt::format("for example --id {}{}; `corral list` shows them all",
                            fmt::join(slugs.begin(), slugs.begin() + static_cast<std::ptrdiff_t>(shown), ", --id "),
                            shown < slugs.size() ? ", ..." : ""));
  }
  return slugs.front();
}

LeaseStatus status(Session& session, Ui& ui, const LeaseSpec& spec) {
  LeaseSpec which = spec;
  if (which.lease.empty()) which.lease = only_lease(session, "corral status");
  LeaseContext ctx = session.context(ui);
  Lease lease = attach(ctx, which, Lease::Access::observe, Lease::Pooled::allow);
  const Sandbox sandbox = lease.live();
  return {lease.claim(), sandbox};
}

std::string status_to_json(const LeaseStatus& s) {
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("lease");
    w.StartObject();
    write_claim_fields(w, s.claim);
    json::write_string(w, "cleanupCommand", cleanup_command(s.claim.provider, s.claim.lease_id));
    w.EndObject();
    w.Key("sandbox");
    json::write_sandbox(w, s.sandbox, /*include_secrets=*/false);
    w.EndObject();
  });
}

std::vector<LeaseRow> leases(Session& session) { return list_leases(session.claims()); }

std::string leases_to_json(const std::vector<LeaseRow>& rows) {
  return json::text_of([&](json::Writer& w) {
    w.StartArray();
    for (const LeaseRow& r : rows) write_lease_row(w, r);
    w.EndArray();
  });
}

RemoteListing remote_sandboxes(Session& session, Ui& ui, const ProviderChoice& provider, bool all_hosts) {
  auto opened = session.providers().open(session.providers().resolve(provider), provider, ui);
  LeaseContext ctx = session.context(ui);
  RemoteListing listing{.provider = opened->spec().name, .rows = list_remote(ctx, *opened)};
  if (!all_hosts) std::erase_if(listing.rows, [](const RemoteRow& r) { return is_foreign(r.owner); });
  return listing;
}

std::string remote_sandboxes_to_json(const std::vector<RemoteRow>& rows) {
  return json::text_of([&](json::Writer& w) {
    w.StartArray();
    for (const RemoteRow& r : rows) write_remote_row(w, r);
    w.EndArray();
  });
}

std::vector<StopOutcome> stop(Session& session, Ui& ui, const StopSpec& spec) {
  const int modes = (spec.orphans ? 1 : 0) + (spec.all ? 1 : 0) + (spec.lease.empty() ? 0 : 1);
  if (modes > 1)
    throw Error(ErrorCode::invalid_argument, "stop takes one of --id LEASE, --all or --orphans",
                "`corral list` shows your leases");
  if (modes == 0) {
    StopSpec only = spec;
    only.lease = only_lease(session, "corral stop");
    return stop(session, ui, only);
  }
  if (spec.all_hosts && !spec.orphans) throw Error(ErrorCode::invalid_argument, "--all-hosts goes with --orphans");
  LeaseContext ctx = session.context(ui);
  if (spec.orphans) {
    const OrphanScope scope{.all_hosts = spec.all_hosts, .all_providers_abandoned = spec.provider.provider.empty()};
    return stop_orphans(ctx, spec.provider, scope);
  }
  if (spec.all) return stop_all(ctx);
  return {stop_lease(ctx, spec.lease, spec.provider)};
}

}  // namespace corral::service
