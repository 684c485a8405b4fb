// `corral status`: a kept lease and its sandbox's state, as the provider reports it now.
#include <memory>

#include "commands/commands.hpp"
#include "json_line.hpp"
#include "lease/handle.hpp"
#include "lease/lease.hpp"
#include "options.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

struct StatusOptions {
  std::string id;
  bool json = false;
  std::string provider;
};

void print_json(Context& ctx, const Claim& claim, const Sandbox& sandbox) {
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
}

int status_command(Context& ctx, const StatusOptions& o) {
  Lease lease = Lease::attach(ctx.leases, o.id, ctx.choice(o.provider), Lease::Access::observe, Lease::Pooled::allow);
  const Claim& claim = lease.claim();
  const Sandbox& sandbox = lease.live();
  if (o.json) {
    print_json(ctx, claim, sandbox);
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

Runner define(CLI::App& app) {
  auto o = std::make_shared<StatusOptions>();
  add_lease_option(app, o->id)->required();
  add_json_flag(app, o->json);
  add_provider_option(app, o->provider);
  return [o](Context& ctx) { return status_command(ctx, *o); };
}

}  // namespace

const Command kStatus = {
    .name = "status",
    .summary = "Show a lease and its sandbox's state",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
