// `corral extend`: more lifetime for a kept sandbox.
#include <fmt/format.h>

#include <memory>

#include "commands/commands.hpp"
#include "options.hpp"
#include "service/leases.hpp"

namespace corral::cli {
namespace {

struct ExtendOptions {
  std::string id;
  std::string by;  // a duration from now
  std::string provider;
};

int extend_command(Context& ctx, const ExtendOptions& o) {
  const service::Extended e = service::extend(ctx.session, ctx.ui, {o.id, ctx.choice(o.provider)}, o.by);
  ctx.ui.note(fmt::format("extended {} by {}{}", e.claim.slug, format_duration(e.seconds),
                          e.until ? " (until " + *e.until + ")" : ""));
  return 0;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<ExtendOptions>();
  add_lease_option(app, o->id)->required();
  app.add_option("--by", o->by, "How long from now (e.g. 30m, 2h)")->required();
  add_provider_option(app, o->provider);
  return [o](Context& ctx) { return extend_command(ctx, *o); };
}

}  // namespace

const Command kExtend = {
    .name = "extend",
    .summary = "Extend a kept sandbox's lifetime",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
