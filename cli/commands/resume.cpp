// `corral resume`: a paused sandbox runs again as it was.
#include <fmt/format.h>

#include <memory>

#include "commands/commands.hpp"
#include "options.hpp"
#include "service/leases.hpp"

namespace corral::cli {
namespace {

struct ResumeOptions {
  std::string id;
  std::string provider;
};

int resume_command(Context& ctx, const ResumeOptions& o) {
  const service::StateChange result = service::resume(ctx.session, ctx.ui, {o.id, ctx.choice(o.provider)});
  const Claim& claim = result.claim;
  ctx.ui.note(result.changed ? fmt::format("resumed {}", claim.slug)
                             : fmt::format("nothing to resume: {} is running already", claim.slug));
  return 0;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<ResumeOptions>();
  add_lease_option(app, o->id)->required();
  add_provider_option(app, o->provider);
  return [o](Context& ctx) { return resume_command(ctx, *o); };
}

}  // namespace

const Command kResume = {
    .name = "resume",
    .summary = "Resume a paused sandbox",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
