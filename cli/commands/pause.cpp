// `corral pause`: a kept sandbox stops costing compute, its files kept, until resumed.
#include <fmt/format.h>

#include <memory>

#include "commands/commands.hpp"
#include "options.hpp"
#include "service/leases.hpp"

namespace corral::cli {
namespace {

struct PauseOptions {
  std::string id;
  std::string provider;
};

int pause_command(Context& ctx, const PauseOptions& o) {
  const service::StateChange result = service::pause(ctx.session, ctx.ui, {o.id, ctx.choice(o.provider)});
  const Claim& claim = result.claim;
  ctx.ui.note(result.changed
                  ? fmt::format("paused {0}; `corral resume --id {0}` or `corral run --id {0} -- CMD` resumes it",
                                claim.slug)
                  : fmt::format("{0} is paused already; `corral resume --id {0}` resumes it", claim.slug));
  return 0;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<PauseOptions>();
  add_lease_option(app, o->id)->required();
  add_provider_option(app, o->provider);
  return [o](Context& ctx) { return pause_command(ctx, *o); };
}

}  // namespace

const Command kPause = {
    .name = "pause",
    .summary = "Pause a kept sandbox (it keeps its files and costs little)",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
