// `corral warmup`: a new sandbox, synced and kept, ready for `corral run --id`.
#include <memory>
#include <optional>

#include "commands/commands.hpp"
#include "commands/run_options.hpp"
#include "lease/handle.hpp"
#include "lease/output_file.hpp"

namespace corral::cli {
namespace {

// Prints the kept sandbox's handle (and writes it to --lease-output).
int warmup_command(Context& ctx, const SandboxOptions& sandbox) {
  std::optional<OutputFile> output;
  if (!sandbox.lease_output.empty()) output.emplace(sandbox.lease_output, "session handle");
  RunOptions args;
  args.sandbox = sandbox;
  SessionHandle handle = warmup(ctx.leases, to_request(ctx, args));
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
