// `corral pool fill|status|drain`: warm pools of ready sandboxes that `corral run` takes
// from. Core (lease/pool.hpp) fills, counts and drains; this parses and reports.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "commands/commands.hpp"
#include "commands/stop_report.hpp"
#include "corral/errors.hpp"
#include "corral/types.hpp"
#include "options.hpp"
#include "service/pools.hpp"
#include "service/refill.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

using service::kCannotPause;

struct FillOptions {
  service::FillSpec spec;
  bool json = false;
};

int fill_command(Context& ctx, FillOptions& o) {
  o.spec.provider.option_flags = ctx.provider_flags;
  const FillResult r = service::fill(ctx.session, ctx.ui, o.spec);
  if (o.json) {
    ctx.ui.out(service::fill_result_to_json(r) + "\n");
    return 0;
  }
  ctx.ui.note(fmt::format("pool {} ({}): {} ready before, {} made{}{}", r.key, r.provider, r.ready_before, r.made,
                          r.made > 0 ? fmt::format(" ({} ms each)", r.ms_per_sandbox) : std::string(),
                          r.can_pause ? ", paused" : std::string("; ") + kCannotPause));
  if (r.made > 0 && r.ms_per_sandbox < service::kWorthPoolingMs)
    ctx.ui.note(fmt::format("a {} sandbox starts about as fast without a pool, so the pool saves runs little "
                            "(`corral pool drain` removes it{})",
                            r.provider, o.spec.no_refill ? "" : "; a fill with --no-refill is not refilled by runs"));
  return 0;
}

Runner define_fill(CLI::App& app) {
  auto o = std::make_shared<FillOptions>();
  add_provider_option(app, o->spec.provider.provider);
  app.add_option("--size", o->spec.size, fmt::format("Keep N sandboxes ready (1-{})", kMaxPoolSize))
      ->capture_default_str();
  app.add_option("--pool-ttl", o->spec.ttl, "How long a pooled sandbox waits before `stop --orphans` removes it")
      ->capture_default_str();
  app.add_option("--network", o->spec.network,
                 "What the pooled sandboxes may reach: open, none, or allow:HOST[,HOST...] (runs with the same "
                 "policy take them)")
      ->type_name(kNetworkValue);
  app.add_option("--max-workspace", o->spec.max_workspace, "Refuse a workspace above SIZE (0 = no limit)")
      ->capture_default_str();
  app.add_flag("--no-refill", o->spec.no_refill,
               "Runs that take a sandbox from the pool do not refill it (for a provider as fast without one)");
  add_json_flag(app, o->json);
  return [o](Context& ctx) { return fill_command(ctx, *o); };
}

struct StatusOptions {
  bool json = false;
};

int status_command(Context& ctx, const StatusOptions& o) {
  const std::vector<PoolStatus> pools = service::pools(ctx.session, ctx.ui);
  if (o.json) {
    ctx.ui.out(service::pools_to_json(pools) + "\n");
    return 0;
  }
  if (pools.empty()) {
    ctx.ui.out("no warm pools: `corral pool fill --size N` makes one\n");
    return 0;
  }
  Table t({"POOL", "PROVIDER", "READY", "BUSY", "EXPIRED", "SIZE", "OLDEST", "SANDBOX-MIN", "RUNNING-MIN",
           "WORKSPACE"});
  for (const PoolStatus& p : pools)
    t.add({p.key, p.provider, std::to_string(p.ready), std::to_string(p.busy), std::to_string(p.expired),
           std::to_string(p.size), format_duration(p.oldest_seconds), fmt::format("{:.1f}", p.sandbox_minutes),
           fmt::format("{:.1f}", p.running_minutes), p.workspace});
  std::string text = t.str();
  for (const PoolStatus& p : pools) {
    if (!p.can_pause) text += fmt::format("pool {} ({}): {}\n", p.key, p.provider, kCannotPause);
    if (!p.refills) text += fmt::format("pool {} ({}): filled with --no-refill: runs do not refill it\n", p.key, p.provider);
  }
  ctx.ui.out(text);
  return 0;
}

Runner define_status(CLI::App& app) {
  auto o = std::make_shared<StatusOptions>();
  add_json_flag(app, o->json);
  return [o](Context& ctx) { return status_command(ctx, *o); };
}

int drain_command(Context& ctx, const service::DrainSpec& o) {
  const DrainResult drained = service::drain(ctx.session, ctx.ui, o);
  if (drained.outcomes.empty())
    ctx.ui.note(drained.out_of_scope == 0
                    ? std::string("nothing to drain: no pooled sandboxes")
                    : fmt::format("nothing to drain for this working tree; {} pooled sandbox{} of other working trees "
                                  "left (`corral pool drain --all` drains every one)",
                                  drained.out_of_scope, drained.out_of_scope == 1 ? "" : "es"));
  else if (drained.out_of_scope > 0)
    ctx.ui.info(fmt::format("{} pooled sandbox{} of other working trees left (--all drains them too)",
                            drained.out_of_scope, drained.out_of_scope == 1 ? "" : "es"));
  return report_stops(ctx, drained.outcomes);
}

Runner define_drain(CLI::App& app) {
  auto o = std::make_shared<service::DrainSpec>();
  add_provider_option(app, o->provider);
  app.add_flag("--all", o->all, "drain the pools of every working tree, not only this one's");
  return [o](Context& ctx) { return drain_command(ctx, *o); };
}

Runner define_refill(CLI::App&) {
  // Started by a run, detached (service/refill.hpp), with the fill as JSON after --.
  return [](Context& ctx) {
    if (ctx.words_after_dashes.size() != 1)
      throw Error(ErrorCode::invalid_argument, "a refill takes one JSON document after --");
    const FillResult r = service::refill(ctx.session, ctx.ui, ctx.words_after_dashes[0]);
    ctx.ui.note(fmt::format("pool {} ({}): {} ready before, {} made", r.key, r.provider, r.ready_before, r.made));
    return 0;
  };
}

Runner define_pool(CLI::App& app) {
  app.require_subcommand(1);
  return nullptr;
}

}  // namespace

const Command kPool = {
    .name = "pool",
    .summary = "Warm pools: sandboxes made ready ahead of `corral run`",
    .define = define_pool,
};

const Command kPoolFill = {
    .name = "fill",
    .parent = "pool",
    .summary = "Create, sync and pause sandboxes until the pool holds --size",
    .provider_options = true,
    .define = define_fill,
};

const Command kPoolStatus = {
    .name = "status",
    .parent = "pool",
    .summary = "The pools with their sizes, ages and cost so far",
    .define = define_status,
};

const Command kRefill = {
    .name = service::kRefillCommand,
    .summary = "Fill a warm pool back to its size (what a run that took a pooled sandbox starts)",
    .hidden = true,
    .takes_words_after_dashes = true,
    .define = define_refill,
};

const Command kPoolDrain = {
    .name = "drain",
    .parent = "pool",
    .summary = "Stop and forget this working tree's pooled sandboxes (--all: every tree's)",
    .define = define_drain,
};

}  // namespace corral::cli
