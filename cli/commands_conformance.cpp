// `corral conformance`: the run contract checked against one provider.
#include <fmt/format.h>

#include "commands.hpp"
#include "conformance/conformance.hpp"

namespace corral::cli {
namespace {

// "  ok    id           title (1.2 s)" and, for a failure or a skip, the reason below it.
std::string check_line(const CheckResult& c) {
  static constexpr std::string_view kWords[] = {"ok", "FAIL", "skip"};
  std::string line = fmt::format("  {:<5} {:<17} {}", kWords[static_cast<int>(c.outcome)], c.id, c.title);
  if (c.outcome != CheckResult::Outcome::skipped) line += fmt::format(" ({:.1f} s)", c.ms / 1000.0);
  line += "\n";
  if (!c.detail.empty()) line += fmt::format("        {}\n", c.detail);
  return line;
}

}  // namespace

int conformance_command(Context& ctx, const ConformanceArgs& args) {
  ConformanceSetup setup{[&ctx]() -> const Registry& { return ctx.registry(); }, ctx.config, ctx.claims, ctx.ui,
                         args.choice};
  setup.only = args.only;
  setup.network_target = args.network_target;
  if (!args.check_timeout.empty()) {
    const std::int64_t seconds = parse_duration(args.check_timeout);
    if (seconds <= 0)
      throw Error(ErrorCode::invalid_argument, "--check-timeout must be a positive duration", "e.g. --check-timeout 5m");
    setup.check_timeout = std::chrono::seconds(seconds);
  }
  bool header = false;
  ConformanceReport report = run_conformance(setup, [&](const CheckResult& c) {
    if (args.json) return;
    if (!header) {
      ctx.ui.out(fmt::format("conformance of provider '{}':\n", ctx.providers.resolve(args.choice)));
      header = true;
    }
    ctx.ui.out(check_line(c));
  });
  if (args.json) {
    ctx.ui.out(conformance_to_json(report));
  } else {
    ctx.ui.out(fmt::format("{}: {} passed, {} failed, {} skipped\n", report.provider,
                           report.count(CheckResult::Outcome::passed), report.count(CheckResult::Outcome::failed),
                           report.count(CheckResult::Outcome::skipped)));
  }
  if (ctx.ui.cancelled()) return kExitCancelled;
  return report.passed() ? 0 : 1;
}

}  // namespace corral::cli
