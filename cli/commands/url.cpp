// `corral url`: the URL of a port inside a kept sandbox.
#include <memory>

#include "commands/commands.hpp"
#include "options.hpp"
#include "service/leases.hpp"

namespace corral::cli {
namespace {

struct UrlOptions {
  std::string id;
  int port = 0;
  std::string provider;
};

int url_command(Context& ctx, const UrlOptions& o) {
  ctx.ui.out(service::url(ctx.session, ctx.ui, {o.id, ctx.choice(o.provider)}, o.port) + "\n");
  return 0;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<UrlOptions>();
  add_lease_option(app, o->id)->required();
  app.add_option("--port", o->port, "Port inside the sandbox")->required();
  add_provider_option(app, o->provider);
  return [o](Context& ctx) { return url_command(ctx, *o); };
}

}  // namespace

const Command kUrl = {
    .name = "url",
    .summary = "Print the URL of a port inside a kept sandbox",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
