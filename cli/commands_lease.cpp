// Commands on leases: list, status, stop, url, extend. Each asks core (lease.hpp,
// fleet.hpp) and formats the answer; no lease rule lives here.
#include <fmt/format.h>

#include "commands.hpp"
#include "corral/json.hpp"
#include "corral/sdk/shell.hpp"
#include "corral/wire.hpp"
#include "lease/handle.hpp"
#include "base/printable.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

void write_lease(json::Writer& w, const LeaseRow& row) {
  w.StartObject();
  if (row.file.claim) {
    write_claim_fields(w, *row.file.claim);
    json::write_string(w, "cleanupCommand", cleanup_command(row.file.claim->provider, row.file.lease_id));
  } else {
    json::write_string(w, "leaseId", row.file.lease_id);
    json::write_string(w, "provider", row.file.provider);
    json::write_string(w, "sandboxId", row.file.sandbox_id);
    json::write_string(w, "problem", row.file.problem);
    json::write_string(w, "cleanupCommand", "corral stop --id " + sdk::shell_quote(row.file.lease_id));
  }
  json::write_string(w, "state", to_string(row.state));
  w.EndObject();
}

std::string json_line(const std::function<void(json::Writer&)>& body) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  body(w);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

// Reports stop outcomes; the exit status of the first failure, else 0.
int report(Context& ctx, const std::vector<StopOutcome>& outcomes) {
  int status = 0;
  for (const StopOutcome& o : outcomes) {
    if (o.error) {
      ctx.ui.error(fmt::format("{}: {}", o.what, o.error->what()), o.error->hint());
      if (status == 0) status = o.error->exit_code();
    } else {
      ctx.ui.note("stopped " + o.what);
    }
  }
  return status;
}

}  // namespace

int list_command(Context& ctx, bool as_json, bool remote, bool all_hosts, const ProviderChoice& choice) {
  if (remote) {
    auto session = ctx.providers.open(ctx.providers.resolve(choice), choice);
    std::vector<RemoteRow> rows = list_remote(ctx.leases, *session);
    if (!all_hosts)
      std::erase_if(rows, [](const RemoteRow& r) {
        return r.owner == RemoteOwner::other_host || r.owner == RemoteOwner::unknown_host;
      });
    if (as_json) {
      ctx.ui.out(json_line([&](json::Writer& w) {
        w.StartArray();
        for (const RemoteRow& r : rows) {
          w.StartObject();
          json::write_string(w, "sandboxId", r.sandbox.id);
          json::write_string(w, "state", r.sandbox.state);
          json::write_map(w, "labels", r.sandbox.labels);
          json::write_string(w, "owner", to_string(r.owner));
          w.Key("claimed");
          w.Bool(r.owner == RemoteOwner::claimed);
          w.EndObject();
        }
        w.EndArray();
      }));
      return 0;
    }
    Table t({"SANDBOX", "STATE", "SLUG", "OWNER"});
    for (const RemoteRow& r : rows) {
      auto slug = r.sandbox.labels.find(wire::kSlugLabel);
      t.add({r.sandbox.id, r.sandbox.state, slug == r.sandbox.labels.end() ? "" : slug->second,
             std::string(to_string(r.owner))});
    }
    ctx.ui.out(t.empty() ? fmt::format("no corral sandboxes at {}\n", session->spec().name) : t.str());
    return 0;
  }
  std::vector<LeaseRow> rows = list_leases(ctx.claims);
  if (as_json) {
    ctx.ui.out(json_line([&](json::Writer& w) {
      w.StartArray();
      for (const LeaseRow& r : rows) write_lease(w, r);
      w.EndArray();
    }));
    return 0;
  }
  if (rows.empty()) {
    ctx.ui.note("no leases; `corral run --keep -- CMD` keeps a sandbox for reuse");
    return 0;
  }
  Table t({"SLUG", "LEASE", "STATE", "PROVIDER", "SANDBOX", "CREATED", "WORKSPACE"});
  bool stale = false;
  for (const LeaseRow& r : rows) {
    stale = stale || r.state == LeaseState::abandoned || r.state == LeaseState::corrupt;
    if (r.file.claim) {
      const Claim& c = *r.file.claim;
      t.add({c.slug, c.lease_id, std::string(to_string(r.state)), c.provider, c.sandbox_id, c.created_at,
             c.workspace});
    } else {
      t.add({"?", r.file.lease_id, "corrupt", r.file.provider, r.file.sandbox_id, "", r.file.problem});
    }
  }
  ctx.ui.out(t.str());
  if (stale)
    ctx.ui.note("abandoned leases were left by a corral that died or could not stop their sandbox; "
                "`corral stop --orphans` removes them, "
                "`corral stop --id LEASE` removes one (corrupt ones too)");
  return 0;
}

int status_command(Context& ctx, const std::string& id, bool as_json, const ProviderChoice& choice) {
  Lease lease = Lease::attach(ctx.leases, id, choice, Lease::Access::observe);
  const Claim& claim = lease.claim();
  const Sandbox& sandbox = lease.live();
  if (as_json) {
    ctx.ui.out(json_line([&](json::Writer& w) {
      w.StartObject();
      w.Key("lease");
      w.StartObject();
      write_claim_fields(w, claim);
      json::write_string(w, "cleanupCommand", cleanup_command(claim.provider, claim.lease_id));
      w.EndObject();
      w.Key("sandbox");
      json::write_sandbox(w, sandbox, /*include_secrets=*/false);
      w.EndObject();
    }));
    return 0;
  }
  Table t({"FIELD", "VALUE"});
  t.add({"slug", claim.slug});
  t.add({"lease", claim.lease_id});
  t.add({"provider", claim.provider});
  t.add({"sandbox", sandbox.id});
  t.add({"state", sandbox.state});
  t.add({"created", claim.created_at});
  t.add({"workspace", claim.workspace});
  t.add({"network policy", to_string(claim.network)});
  for (const auto& [k, v] : sandbox.details) t.add({k, v});
  t.add({"stop with", cleanup_command(claim.provider, claim.lease_id)});
  ctx.ui.out(t.str());
  return 0;
}

int stop_command(Context& ctx, const StopArgs& args, const ProviderChoice& choice) {
  int modes = (args.orphans ? 1 : 0) + (args.all ? 1 : 0) + (args.id.empty() ? 0 : 1);
  if (modes != 1)
    throw Error(ErrorCode::invalid_argument, "stop needs exactly one of --id LEASE, --all or --orphans",
                "`corral list` shows your leases");
  if (args.all_hosts && !args.orphans)
    throw Error(ErrorCode::invalid_argument, "--all-hosts goes with --orphans");
  if (args.orphans) {
    OrphanScope scope;
    scope.all_hosts = args.all_hosts;
    scope.all_providers_abandoned = choice.provider.empty();
    std::vector<StopOutcome> outcomes = stop_orphans(ctx.leases, choice, scope);
    int status = report(ctx, outcomes);
    if (outcomes.empty()) ctx.ui.note("nothing to stop: no abandoned leases or orphan sandboxes");
    return status;
  }
  if (args.all) return report(ctx, stop_all(ctx.leases));
  return report(ctx, {stop_lease(ctx.leases, args.id, choice)});
}

int url_command(Context& ctx, const std::string& id, int port, const ProviderChoice& choice) {
  Lease lease = Lease::attach(ctx.leases, id, choice, Lease::Access::observe);
  ctx.ui.out(printable(lease.url(port)) + "\n");
  return 0;
}

int extend_command(Context& ctx, const std::string& id, const std::string& by, const ProviderChoice& choice) {
  std::int64_t seconds = parse_duration(by);
  Lease lease = Lease::attach(ctx.leases, id, choice, Lease::Access::observe);
  Sandbox updated = lease.extend(seconds);
  auto end = updated.details.find("endAt");
  ctx.ui.note(fmt::format("extended {} by {}{}", lease.claim().slug, format_duration(seconds),
                          end == updated.details.end() ? "" : " (until " + end->second + ")"));
  return 0;
}

}  // namespace corral::cli
