#include "commands/run_options.hpp"

#include <filesystem>

#include "base/sizes.hpp"
#include "corral/errors.hpp"
#include "options.hpp"

namespace corral::cli {

void add_sandbox_options(CLI::App& app, SandboxOptions& o) {
  add_provider_option(app, o.provider);
  app.add_option("--lease-output", o.lease_output, "Write the session handle JSON to FILE");
  app.add_option("--env", o.env, "Forward this environment variable (repeatable)")->allow_extra_args(false);
  app.add_option("--max-workspace", o.max_workspace, "Refuse a workspace above SIZE (0 = no limit)")
      ->capture_default_str();
  app.add_option("--network", o.network,
                 "What the new sandbox may reach: open, none, or allow:HOST[,HOST...] (domains, IPs, CIDRs)");
  app.add_option("--idle", o.idle,
                 "What a kept sandbox does once idle for its timeout, where the provider can: pause or stop "
                 "(instead of being deleted)")
      ->check(CLI::IsMember({"pause", "stop"}));
  add_progress_option(app, o.progress);
}

RunRequest to_request(Context& ctx, const RunOptions& args) {
  ctx.ui.set_progress_mode(parse_progress_mode(args.sandbox.progress));
  RunRequest r;
  r.choice = ctx.choice(args.sandbox.provider);
  r.lease = args.lease;
  r.keep = args.keep;
  r.keep_on_failure = args.keep_on_failure;
  r.use_pool = !args.no_pool;
  // The refill a run starts after taking a pooled sandbox is this same corral.
  std::error_code ec;
  r.refill_exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  r.env_names = args.sandbox.env;
  r.max_workspace = parse_size(args.sandbox.max_workspace);
  r.cwd = std::filesystem::current_path();
  r.downloads.patterns = args.downloads;
  r.downloads.dir = args.download_dir;
  r.downloads.max_bytes = parse_size(args.max_download);
  if (!args.downloads.empty() && r.downloads.max_bytes == 0)
    throw Error(ErrorCode::invalid_argument, "--max-download must be above 0", "e.g. --max-download 1G");
  if (args.downloads.empty() && !args.download_dir.empty())
    throw Error(ErrorCode::invalid_argument, "--download-dir without --download", "add --download PATH_OR_GLOB");
  if (args.sandbox.network) r.network = parse_network_policy(*args.sandbox.network);
  r.idle = args.sandbox.idle.empty() ? ctx.config.idle().value_or("") : args.sandbox.idle;
  r.idle_given = !args.sandbox.idle.empty();
  if (!args.timeout.empty()) r.command.timeout_seconds = parse_duration(args.timeout);
  if (!args.shell.empty() && !args.command.empty())
    throw Error(ErrorCode::invalid_argument, "give either --shell 'COMMAND' or a command after --, not both");
  if (!args.shell.empty()) r.command.shell = args.shell;
  else r.command.argv = args.command;
  return r;
}

}  // namespace corral::cli
