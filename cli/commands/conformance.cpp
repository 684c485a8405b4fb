// `corral conformance`: the run contract checked against one provider (for plugin authors).
#include <fmt/format.h>

#include <memory>

#include "commands/commands.hpp"
#include "conformance/conformance.hpp"
#include "conformance/record.hpp"
#include "corral/os/atomic_file.hpp"
#include "options.hpp"

#ifndef CORRAL_VERSION
#define CORRAL_VERSION "0.0.0"
#endif

namespace corral::cli {
namespace {

struct ConformanceOptions {
  std::string provider;
  bool json = false;
  std::vector<std::string> only;  // --only CHECK (repeatable)
  std::string check_timeout;      // --check-timeout DURATION; "" = the default
  std::string network_target;     // --network-target IP:PORT
  std::string record;             // --record FILE: what was verified, for the matrix and `corral providers`
};

// "  ok    id           title (1.2 s)" and, for a failure or a skip, the reason below it.
std::string check_line(const CheckResult& c) {
  static constexpr std::string_view kWords[] = {"ok", "FAIL", "skip"};
  std::string line = fmt::format("  {:<5} {:<17} {}", kWords[static_cast<int>(c.outcome)], c.id, c.title);
  if (c.outcome != CheckResult::Outcome::skipped) line += fmt::format(" ({:.1f} s)", c.ms / 1000.0);
  line += "\n";
  if (!c.detail.empty()) line += fmt::format("        {}\n", c.detail);
  return line;
}

ConformanceSetup setup_of(Context& ctx, const ConformanceOptions& o) {
  ConformanceSetup setup{[&ctx]() -> const Registry& { return ctx.registry(); }, ctx.config, ctx.claims, ctx.ui,
                         ctx.choice(o.provider)};
  setup.only = o.only;
  setup.network_target = o.network_target;
  if (!o.check_timeout.empty()) {
    const std::int64_t seconds = parse_duration(o.check_timeout);
    if (seconds <= 0)
      throw Error(ErrorCode::invalid_argument, "--check-timeout must be a positive duration", "e.g. --check-timeout 5m");
    setup.check_timeout = std::chrono::seconds(seconds);
  }
  return setup;
}

// One line per check, a summary, exit 1 when any check failed.
int conformance_command(Context& ctx, const ConformanceOptions& o) {
  bool header = false;
  const std::string provider = ctx.providers.resolve(ctx.choice(o.provider));
  ConformanceReport report;
  try {
    report = run_conformance(setup_of(ctx, o), [&](const CheckResult& c) {
      if (o.json) return;
      if (!header) {
        ctx.ui.out(fmt::format("conformance of provider '{}':\n", provider));
        header = true;
      }
      ctx.ui.out(check_line(c));
    });
  } catch (const Error& e) {
    // A CI job reading --json learns why no check ran, not only from the exit status.
    if (o.json) ctx.ui.out(conformance_error_to_json(provider, e));
    throw;
  }
  if (o.json) {
    ctx.ui.out(conformance_to_json(report));
  } else {
    ctx.ui.out(fmt::format("{}: {} passed, {} failed, {} skipped\n", report.provider,
                           report.count(CheckResult::Outcome::passed), report.count(CheckResult::Outcome::failed),
                           report.count(CheckResult::Outcome::skipped)));
  }
  if (!o.record.empty() && !ctx.ui.cancelled()) {
    // Written whatever the outcome: a record of a failure says so, feature by feature.
    const VerificationRecord record =
        make_record(report, report.spec, report.library, report.plugin_version, CORRAL_VERSION);
    os::write_file_atomically(o.record, record_to_json(record), 0644, "the verification record");
    ctx.ui.note(fmt::format("verification record written to {}", o.record));
  }
  if (ctx.ui.cancelled()) return kExitCancelled;
  return report.passed() ? 0 : 1;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<ConformanceOptions>();
  add_provider_option(app, o->provider);
  app.add_flag("--json", o->json, "Machine-readable report");
  app.add_option("--only", o->only, "Run only this check (repeatable)")->allow_extra_args(false);
  app.add_option("--check-timeout", o->check_timeout, "Stop a check still running after DURATION (default 10m)");
  app.add_option("--record", o->record,
                 "Write what was verified to FILE: the plugin's sha256, each check's result, each feature's verdict");
  app.add_option("--network-target", o->network_target,
                 "IP:PORT the network checks try to reach (default: a listener on 127.0.0.1)");
  return [o](Context& ctx) { return conformance_command(ctx, *o); };
}

}  // namespace

const Command kConformance = {
    .name = "conformance",
    .summary = "Check that a provider honours corral's run contract (for plugin authors)",
    .details = "Creates, uses and stops real sandboxes, and removes all of them before it exits. The plugin runs in\n"
               "its helper process: a crash, a hang or a plugin that ignores Ctrl-C fails a check, not the kit.",
    .exit_status = "0 when every check passed or was skipped, 1 when one failed",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
