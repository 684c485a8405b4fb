// `corral stop`: one kept lease, every lease here, or what dead corrals left (--orphans).
// Core (fleet.hpp) does the stopping; this reports each outcome.
#include <fmt/format.h>

#include <memory>

#include "commands/commands.hpp"
#include "commands/stop_report.hpp"
#include "options.hpp"
#include "service/leases.hpp"

namespace corral::cli {

int report_stops(Context& ctx, const std::vector<StopOutcome>& outcomes) {
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

namespace {

struct StopOptions {
  std::string id;
  bool all = false;
  bool orphans = false;
  bool all_hosts = false;
  std::string provider;
};

int stop_command(Context& ctx, const StopOptions& o) {
  const std::vector<StopOutcome> outcomes = service::stop(
      ctx.session, ctx.ui,
      {.lease = o.id, .all = o.all, .orphans = o.orphans, .all_hosts = o.all_hosts, .provider = ctx.choice(o.provider)});
  const int status = report_stops(ctx, outcomes);
  if (o.orphans && outcomes.empty()) ctx.ui.note("nothing to stop: no abandoned leases or orphan sandboxes");
  return status;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<StopOptions>();
  add_lease_option(app, o->id);
  app.add_flag("--all", o->all, "Stop every lease on this machine");
  app.add_flag("--orphans", o->orphans,
               "Remove abandoned leases and the provider's sandboxes made here that no lease claims");
  app.add_flag("--all-hosts", o->all_hosts, "With --orphans: also other machines' sandboxes (careful)");
  add_provider_option(app, o->provider);
  return [o](Context& ctx) { return stop_command(ctx, *o); };
}

}  // namespace

const Command kStop = {
    .name = "stop",
    .summary = "Stop a kept sandbox and forget its lease",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
