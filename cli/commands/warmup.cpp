// `corral warmup`: a new sandbox, synced and kept, ready for `corral run --id`.
#include <memory>
#include <optional>

#include "commands/commands.hpp"
#include "commands/run_options.hpp"
#include "lease/handle.hpp"
#include "lease/output_file.hpp"
#include "service/run_spec.hpp"

namespace corral::cli {
namespace {

// Prints the kept sandbox's handle (and writes it to --lease-output).
int warmup_command(Context& ctx, SandboxOptions& sandbox) {
  finish_sandbox_options(ctx, sandbox);
  std::optional<OutputFile> output;
  if (!sandbox.lease_output.empty()) output.emplace(sandbox.lease_output, "session handle");
  SessionHandle handle = service::warmup(ctx.session, ctx.ui, sandbox.spec);
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
