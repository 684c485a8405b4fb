// `corral status`: a kept lease and its sandbox's state, as the provider reports it now.
#include <memory>

#include "commands/commands.hpp"
#include "lease/cleanup_command.hpp"
#include "options.hpp"
#include "service/leases.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

struct StatusOptions {
  std::string id;
  bool json = false;
  std::string provider;
};

int status_command(Context& ctx, const StatusOptions& o) {
  const service::LeaseStatus status = service::status(ctx.session, ctx.ui, {o.id, ctx.choice(o.provider)});
  if (o.json) {
    ctx.ui.out(service::status_to_json(status) + "\n");
    return 0;
  }
  const Claim& claim = status.claim;
  const Sandbox& sandbox = status.sandbox;
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
  add_lease_option(app, o->id);  // none: the only lease there is
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
