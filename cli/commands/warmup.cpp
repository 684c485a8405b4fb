// `corral warmup`: a new sandbox, synced and kept, ready for `corral run --id`.
#include <functional>
#include <memory>
#include <optional>

#include "commands/commands.hpp"
#include "commands/run_options.hpp"
#include "corral/errors.hpp"
#include "lease/handle.hpp"
#include "lease/output_file.hpp"
#include "service/run_spec.hpp"

namespace corral::cli {
namespace {

// Prints the kept sandbox's handle and writes it to --lease-output, as a run does: once
// the sandbox exists (so a corral killed while it syncs leaves one), and at the end, with
// the error when it failed (the sandbox is then stopped, and the handle says so).
int warmup_command(Context& ctx, SandboxOptions& sandbox) {
  finish_sandbox_options(ctx, sandbox);
  std::optional<OutputFile> output;
  if (!sandbox.lease_output.empty()) output.emplace(sandbox.lease_output, "session handle");
  std::optional<SessionHandle> acquired;
  std::function<void(const SessionHandle&)> on_acquired;
  if (output)
    on_acquired = [&](const SessionHandle& h) {
      acquired = h;
      if (output->rewritable()) write_early(*output, handle_to_json(h));
    };
  SessionHandle handle;
  try {
    handle = service::warmup(ctx.session, ctx.ui, sandbox.spec, on_acquired);
  } catch (const Error& e) {
    if (acquired) {
      acquired->error = e;
      int ignored = e.exit_code();
      write_final(ctx, *output, handle_to_json(*acquired), ignored, true);
    }
    throw;
  }
  if (ctx.trace) {
    ctx.trace->root().attribute("corral.provider", handle.provider);
    ctx.trace->root().attribute("corral.lease", handle.lease_id);
    ctx.trace->root().attribute("corral.sandbox", handle.sandbox_id);
  }
  if (output) output->write(handle_to_json(handle), stop_requested);
  ctx.ui.out(handle_to_json(handle));
  return 0;
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<SandboxOptions>();
  add_sandbox_options(app, *o);
  return [o](Context& ctx) { return warmup_command(ctx, *o); };
}

}  // namespace

const Command kWarmup = {
    .name = "warmup",
    .summary = "Create and sync a sandbox and keep it; prints its handle",
    .provider_options = true,
    .scans_workspace = true,
    .define = define,
};

}  // namespace corral::cli
