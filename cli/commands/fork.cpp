// `corral fork`: N copies of a kept sandbox's current state, each a kept lease of its own.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "commands/commands.hpp"
#include "lease/fork.hpp"
#include "lease/output_file.hpp"
#include "options.hpp"
#include "service/leases.hpp"

namespace corral::cli {
namespace {

struct ForkCommandOptions {
  std::string id;
  int count = 1;
  bool keep = false;
  std::string lease_output;
  std::string provider;
  std::string progress = "auto";
};

int fork_command(Context& ctx, const ForkCommandOptions& o) {
  ctx.ui.set_progress_mode(parse_progress_mode(o.progress));
  std::optional<OutputFile> output;
  if (!o.lease_output.empty()) output.emplace(o.lease_output, "fork handles");
  const service::ForkOutcome forks = service::fork(
      ctx.session, ctx.ui, {.source = {o.id, ctx.choice(o.provider)}, .count = o.count, .keep_partial = o.keep});
  const std::string text = fork_handles_to_json(forks.forks);
  int exit_code = 0;
  if (output) {
    try {
      output->write(text, stop_requested);
    } catch (const Error& e) {
      ctx.ui.error(e);
      exit_code = e.exit_code();
    }
  }
  ctx.ui.out(text);
  for (const SessionHandle& h : forks.forks)
    ctx.ui.note(fmt::format("fork {} (lease {}): run in it with --id {}; stop with `{}`", h.slug, h.lease_id, h.slug,
                            h.cleanup_command));
  for (const Error& e : forks.failed) {
    ctx.ui.error(e);
    if (exit_code == 0) exit_code = e.exit_code();
  }
  if (ctx.ui.cancelled() && exit_code == 0) exit_code = kExitCancelled;
  return exit_code;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<ForkCommandOptions>();
  add_lease_option(app, o->id)->required();
  app.add_option("--count", o->count, fmt::format("How many copies to make (1-{})", kMaxForks))->capture_default_str();
  app.add_flag("--keep", o->keep, "Keep the forks that were made even when others failed or corral was stopped");
  app.add_option("--lease-output", o->lease_output, "Write {\"forks\":[handle,...]} to FILE");
  add_provider_option(app, o->provider);
  add_progress_option(app, o->progress);
  return [o](Context& ctx) { return fork_command(ctx, *o); };
}

}  // namespace

const Command kFork = {
    .name = "fork",
    .summary = "Copy a kept sandbox's current state into N new kept leases",
    .details = "Uses the provider's own fork: nothing is created from scratch or uploaded again. Each fork is a\n"
               "lease of its own (run --id, status, stop --id); a write in one is not seen in the source or the\n"
               "others. Without --keep, a fork that fails removes the others.",
    .provider_options = true,
    .define = define,
};

}  // namespace corral::cli
