// `corral list`: this machine's leases, or with --remote a provider's corral sandboxes.
// Core (fleet.hpp) decides each one's state and owner; this formats them.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <memory>

#include "commands/commands.hpp"
#include "corral/wire.hpp"
#include "options.hpp"
#include "service/leases.hpp"
#include "lease/usage_log.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

struct ListOptions {
  bool json = false;
  bool remote = false;
  bool all_hosts = false;
  std::string provider;
};

// `list --remote`: what the provider holds, other machines' only with --all-hosts.
int list_remote_command(Context& ctx, const ListOptions& o) {
  const service::RemoteListing listing =
      service::remote_sandboxes(ctx.session, ctx.ui, ctx.choice(o.provider), o.all_hosts);
  if (o.json) {
    ctx.ui.out(service::remote_sandboxes_to_json(listing.rows) + "\n");
    return 0;
  }
  Table t({"SANDBOX", "STATE", "SLUG", "OWNER"});
  for (const RemoteRow& r : listing.rows) {
    auto slug = r.sandbox.labels.find(wire::kSlugLabel);
    t.add({r.sandbox.id, r.sandbox.state, slug == r.sandbox.labels.end() ? "" : slug->second,
           std::string(to_string(r.owner))});
  }
  ctx.ui.out(t.empty() ? fmt::format("no corral sandboxes at {}\n", listing.provider) : t.str());
  return 0;
}

// The leases as a table, and a note on how to remove those a dead corral left.
void print_leases(Context& ctx, const std::vector<LeaseRow>& rows) {
  Table t({"SLUG", "LEASE", "STATE", "PROVIDER", "SANDBOX", "CREATED", "TIME", "WORKSPACE"});
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  bool stale = false;
  for (const LeaseRow& r : rows) {
    stale = stale || r.state == LeaseState::abandoned || r.state == LeaseState::corrupt;
    if (r.file.claim) {
      const Claim& c = *r.file.claim;
      // Its sandbox-time so far.
      const std::optional<std::int64_t> created = parse_utc_time(c.created_at);
      t.add({c.slug, c.lease_id, std::string(to_string(r.state)), c.provider, c.sandbox_id, c.created_at,
             created ? format_duration(std::max<std::int64_t>(0, now - *created)) : "?", c.workspace});
    } else {
      t.add({"?", r.file.lease_id, "corrupt", r.file.provider, r.file.sandbox_id, "", "", r.file.problem});
    }
  }
  ctx.ui.out(t.str());
  if (stale)
    ctx.ui.note("abandoned leases were left by a corral that died or could not stop their sandbox; "
                "`corral stop --orphans` removes them, "
                "`corral stop --id LEASE` removes one (corrupt ones too)");
}

// For each provider of `rows` that has a `sandboxes` limit: how many of its slots are
// in use now, across every corral of this machine.
void print_slots(Context& ctx, const std::vector<LeaseRow>& rows) {
  std::vector<std::string> seen;
  for (const LeaseRow& r : rows) {
    const std::string& provider = r.file.claim ? r.file.claim->provider : r.file.provider;
    if (provider.empty() || std::find(seen.begin(), seen.end(), provider) != seen.end()) continue;
    seen.push_back(provider);
    const ProviderLimits limits = ctx.session.fleet().limits(provider);
    if (limits.sandboxes > 0)
      ctx.ui.out(fmt::format("{} slots: {} of {} in use (limits.{}.sandboxes)\n", provider,
                             ctx.session.fleet().in_use(provider), limits.sandboxes, provider));
  }
}

int list_command(Context& ctx, const ListOptions& o) {
  if (o.remote) return list_remote_command(ctx, o);
  const std::vector<LeaseRow> rows = service::leases(ctx.session);
  if (o.json) {
    ctx.ui.out(service::leases_to_json(rows) + "\n");
    return 0;
  }
  if (rows.empty()) ctx.ui.note("no leases; `corral run --keep -- CMD` keeps a sandbox for reuse");
  else print_leases(ctx, rows);
  print_slots(ctx, rows);
  return 0;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<ListOptions>();
  add_json_flag(app, o->json);
  app.add_flag("--remote", o->remote, "Ask the provider for every corral-owned sandbox");
  app.add_flag("--all-hosts", o->all_hosts, "With --remote: also other machines' sandboxes");
  add_provider_option(app, o->provider);
  return [o](Context& ctx) { return list_command(ctx, *o); };
}

}  // namespace

const Command kList = {
    .name = "list",
    .summary = "List kept leases (or a provider's corral sandboxes)",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
