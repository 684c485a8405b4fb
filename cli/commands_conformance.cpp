// `corral conformance`: the run contract checked against one provider.
#include <fmt/format.h>

#include "commands.hpp"
#include "conformance.hpp"

namespace corral::cli {
namespace {

// "  ok    id           title (1.2 s)" and, for a failure or a skip, the reason below it.
std::string check_line(const CheckResult& c) {
  static constexpr std::string_view kWords[] = {"ok", "FAIL", "skip"};
  std::string line = fmt::format("  {:<5} {:<16} {}", kWords[static_cast<int>(c.outcome)], c.id, c.title);
  if (c.outcome != CheckResult::Outcome::skipped) line += fmt::format(" ({:.1f} s)", c.ms / 1000.0);
  line += "\n";
  if (!c.detail.empty()) line += fmt::format("        {}\n", c.detail);
  return line;
}

}  // namespace

int conformance_command(Context& ctx, const ProviderChoice& choice, bool json) {
  ConformanceSetup setup{[&ctx]() -> const Registry& { return ctx.registry(); }, ctx.config, ctx.claims, ctx.ui,
                         choice};
  bool header = false;
  ConformanceReport report = run_conformance(setup, [&](const CheckResult& c) {
    if (json) return;
    if (!header) {
      ctx.ui.out(fmt::format("conformance of provider '{}':\n", ctx.providers.resolve(choice)));
      header = true;
    }
    ctx.ui.out(check_line(c));
  });
  if (json) {
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
