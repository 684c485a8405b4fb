// `corral usage`: how much sandbox-time this machine's corrals used, from the usage log
// and the live leases (core/service/usage.hpp), with a cost estimate where priced.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "commands/commands.hpp"
#include "options.hpp"
#include "service/usage.hpp"
#include "table.hpp"

namespace corral::cli {
namespace {

struct UsageOptions {
  std::string since = "7d";
  std::string by = "provider";
  bool json = false;
};

// Sandbox-time as hours and minutes ("3h12m", "45s").
std::string shown_time(std::int64_t seconds) { return seconds == 0 ? std::string("0s") : format_duration(seconds); }

int usage_command(Context& ctx, const UsageOptions& o) {
  service::UsageQuery query;
  query.since_seconds = parse_duration(o.since);
  query.by = service::parse_usage_grouping(o.by);
  const service::UsageReport report = service::usage(ctx.session, query);
  if (report.skipped > 0)
    ctx.ui.warn(fmt::format("{} {} of the usage log {} no record (cut by a crash, or damaged) and {} skipped",
                            report.skipped, report.skipped == 1 ? "line" : "lines",
                            report.skipped == 1 ? "was" : "were", report.skipped == 1 ? "was" : "were"));
  if (o.json) {
    ctx.ui.out(service::usage_to_json(report) + "\n");
    return 0;
  }
  if (report.rows.empty()) {
    ctx.ui.note(fmt::format("no sandbox-time in the last {}", format_duration(query.since_seconds)));
    return 0;
  }
  const bool priced = std::any_of(report.rows.begin(), report.rows.end(), [](const auto& r) { return r.cost; });
  std::vector<std::string> headers = {o.by == "day" ? "DAY" : o.by == "lease" ? "LEASE" : "PROVIDER"};
  if (o.by == "lease") headers.push_back("PROVIDER");
  for (const char* h : {"SANDBOXES", "LIVE", "SANDBOX-TIME"}) headers.push_back(h);
  if (priced) headers.push_back("EST. COST");
  Table t(headers);
  for (const service::UsageRow& row : report.rows) {
    std::vector<std::string> cells = {row.key};
    if (o.by == "lease") cells.push_back(row.provider);
    cells.push_back(std::to_string(row.sandboxes));
    cells.push_back(std::to_string(row.live));
    cells.push_back(shown_time(row.seconds));
    if (priced) cells.push_back(row.cost ? fmt::format("{:.2f}", *row.cost) : "-");
    t.add(cells);
  }
  ctx.ui.out(t.str());
  ctx.ui.out(fmt::format("total: {} of sandbox-time in the last {}\n", shown_time(report.total_seconds),
                         format_duration(query.since_seconds)));
  return 0;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<UsageOptions>();
  app.add_option("--since", o->since, "How far back to count (e.g. 24h, 7d, 30d)")->capture_default_str();
  app.add_option("--by", o->by, "Group sandbox-time by provider, day (UTC) or lease")
      ->capture_default_str()
      ->type_name("{provider,day,lease}");
  add_json_flag(app, o->json);
  return [o](Context& ctx) { return usage_command(ctx, *o); };
}

}  // namespace

const Command kUsage = {
    .name = "usage",
    .summary = "Sum the sandbox-time this machine's runs used, with a cost estimate",
    .details = "Counts every sandbox corral ended (from the usage log, "
               "$XDG_STATE_HOME/corral/usage.log) and the live leases' time so far, within --since. "
               "Where ~/.config/corral/config.yaml gives a price per sandbox-hour (prices: {e2b: 0.083}), "
               "an estimate of cost is shown; it is an estimate: providers bill by their own rules "
               "(sizes, minimums, storage).\n\n"
               "A daily budget (limits: {e2b: {sandbox-hours-per-day: 8}}) refuses new sandboxes past it "
               "with exit status 75, saying how much was used and when it resets.",
    .define = define,
};

}  // namespace corral::cli
