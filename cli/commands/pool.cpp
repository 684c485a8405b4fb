// `corral pool fill|status|drain`: warm pools of ready sandboxes that `corral run` takes
// from. Core (lease/pool.hpp) fills, counts and drains; this parses and reports.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "base/sizes.hpp"
#include "commands/commands.hpp"
#include "commands/stop_report.hpp"
#include "corral/errors.hpp"
#include "json_line.hpp"
#include "lease/pool.hpp"
#include "options.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

constexpr const char* kCannotPause = "cannot pause: pooled sandboxes run while they wait";

struct FillOptions {
  std::string provider;
  int size = 1;
  std::string ttl = "1h";
  std::optional<std::string> network;
  std::string max_workspace = "512M";
  bool json = false;
};

int fill_command(Context& ctx, const FillOptions& o) {
  FillRequest request;
  request.choice = ctx.choice(o.provider);
  request.size = o.size;
  request.ttl_seconds = parse_duration(o.ttl);
  if (o.network) request.network = parse_network_policy(*o.network);
  request.cwd = std::filesystem::current_path();
  request.max_workspace = parse_size(o.max_workspace);
  FillResult r = fill_pool(ctx.leases, request);
  if (o.json) {
    ctx.ui.out(json_line([&](json::Writer& w) {
      w.StartObject();
      json::write_string(w, "pool", r.key);
      json::write_string(w, "provider", r.provider);
      w.Key("readyBefore");
      w.Int(r.ready_before);
      w.Key("made");
      w.Int(r.made);
      w.EndObject();
    }));
    return 0;
  }
  ctx.ui.note(fmt::format("pool {} ({}): {} ready before, {} made{}", r.key, r.provider, r.ready_before, r.made,
                          r.can_pause ? ", paused" : std::string("; ") + kCannotPause));
  return 0;
}

Runner define_fill(CLI::App& app) {
  auto o = std::make_shared<FillOptions>();
  add_provider_option(app, o->provider);
  app.add_option("--size", o->size, fmt::format("Keep N sandboxes ready (1-{})", kMaxPoolSize))->capture_default_str();
  app.add_option("--pool-ttl", o->ttl, "How long a pooled sandbox waits before `stop --orphans` removes it")
      ->capture_default_str();
  app.add_option("--network", o->network,
                 "What the pooled sandboxes may reach: open, none, or allow:HOST[,HOST...] (runs with the same "
                 "policy take them)");
  app.add_option("--max-workspace", o->max_workspace, "Refuse a workspace above SIZE (0 = no limit)")
      ->capture_default_str();
  add_json_flag(app, o->json);
  return [o](Context& ctx) { return fill_command(ctx, *o); };
}

struct StatusOptions {
  bool json = false;
};

int status_command(Context& ctx, const StatusOptions& o) {
  const std::vector<PoolStatus> pools = pool_status(ctx.leases);
  if (o.json) {
    ctx.ui.out(json_line([&](json::Writer& w) {
      w.StartArray();
      for (const PoolStatus& p : pools) {
        w.StartObject();
        json::write_string(w, "pool", p.key);
        json::write_string(w, "provider", p.provider);
        json::write_string(w, "workspace", p.workspace);
        json::write_string(w, "network", to_string(p.network));
        w.Key("size");
        w.Int(p.size);
        w.Key("ready");
        w.Int(p.ready);
        w.Key("busy");
        w.Int(p.busy);
        w.Key("expired");
        w.Int(p.expired);
        w.Key("oldestSeconds");
        w.Int64(p.oldest_seconds);
        w.Key("sandboxMinutes");
        w.Double(p.sandbox_minutes);
        w.Key("runningMinutes");
        w.Double(p.running_minutes);
        w.Key("canPause");
        w.Bool(p.can_pause);
        if (!p.can_pause) json::write_string(w, "note", kCannotPause);
        w.EndObject();
      }
      w.EndArray();
    }));
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
  for (const PoolStatus& p : pools)
    if (!p.can_pause) text += fmt::format("pool {} ({}): {}\n", p.key, p.provider, kCannotPause);
  ctx.ui.out(text);
  return 0;
}

Runner define_status(CLI::App& app) {
  auto o = std::make_shared<StatusOptions>();
  add_json_flag(app, o->json);
  return [o](Context& ctx) { return status_command(ctx, *o); };
}

struct DrainOptions {
  std::string provider;
};

int drain_command(Context& ctx, const DrainOptions& o) {
  const std::string provider = o.provider.empty() ? std::string() : ctx.providers.spec(o.provider).name;
  std::vector<StopOutcome> outcomes = drain_pools(ctx.leases, provider);
  if (outcomes.empty()) ctx.ui.note("nothing to drain: no pooled sandboxes");
  return report_stops(ctx, outcomes);
}

Runner define_drain(CLI::App& app) {
  auto o = std::make_shared<DrainOptions>();
  add_provider_option(app, o->provider);
  return [o](Context& ctx) { return drain_command(ctx, *o); };
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

const Command kPoolDrain = {
    .name = "drain",
    .parent = "pool",
    .summary = "Stop and forget the pooled sandboxes",
    .define = define_drain,
};

}  // namespace corral::cli
