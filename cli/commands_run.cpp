// `corral run` and `corral warmup`.
#include <filesystem>
#include <fmt/format.h>

#include "commands.hpp"
#include "corral/errors.hpp"
#include "fanout.hpp"
#include "output_file.hpp"
#include "workspace.hpp"

namespace fs = std::filesystem;

namespace corral::cli {
namespace {

RunRequest to_request(const RunArgs& args) {
  RunRequest r;
  r.choice = args.choice;
  r.lease = args.lease;
  r.keep = args.keep;
  r.keep_on_failure = args.keep_on_failure;
  r.env_names = args.env;
  r.max_workspace = parse_size(args.max_workspace);
  r.cwd = fs::current_path();
  r.downloads.patterns = args.downloads;
  r.downloads.dir = args.download_dir;
  r.downloads.max_bytes = parse_size(args.max_download);
  if (!args.downloads.empty() && r.downloads.max_bytes == 0)
    throw Error(ErrorCode::invalid_argument, "--max-download must be above 0", "e.g. --max-download 1G");
  if (args.downloads.empty() && !args.download_dir.empty())
    throw Error(ErrorCode::invalid_argument, "--download-dir without --download", "add --download PATH_OR_GLOB");
  if (args.network) r.network = parse_network_policy(*args.network);
  if (!args.timeout.empty()) r.command.timeout_seconds = parse_duration(args.timeout);
  if (!args.shell.empty() && !args.command.empty())
    throw Error(ErrorCode::invalid_argument, "give either --shell 'COMMAND' or a command after --, not both");
  if (!args.shell.empty()) r.command.shell = args.shell;
  else r.command.argv = args.command;
  return r;
}

// `corral run --shards N`: the fan-out, its handles file and one summary line per failing shard.
int fanout_command(Context& ctx, const RunArgs& args, RunRequest request) {
  FanoutRequest fan;
  fan.run = std::move(request);
  fan.shards = args.shards;
  fan.fail_fast = args.fail_fast;
  fan.max_parallel = args.max_parallel;
  fan.output_dir = args.shard_output;
  FanoutResult result = run_fanout(ctx.leases, fan);
  int exit_code = result.exit_code;
  if (!args.lease_output.empty()) {
    std::vector<std::optional<SessionHandle>> handles;
    for (const ShardOutcome& s : result.shards) handles.push_back(s.result.handle);
    try {
      write_output_file(args.lease_output, shard_handles_to_json(handles), "session handles");
    } catch (const Error& e) {
      ctx.ui.error(e);
      if (exit_code == 0) exit_code = e.exit_code();
    }
  }
  const int n = static_cast<int>(result.shards.size());
  for (int i = 0; i < n; ++i) {
    const auto& h = result.shards[static_cast<size_t>(i)].result.handle;
    if (h && h->kept)
      ctx.ui.note(fmt::format("[{}/{}] kept sandbox {} (lease {}): stop with `{}`", i, n, h->slug, h->lease_id,
                              h->cleanup_command));
  }
  for (const ShardSummary& line : fanout_summary(result)) {
    if (line.stopped) ctx.ui.note(line.text);
    else ctx.ui.error(line.text, line.hint);
  }
  return exit_code;
}

}  // namespace

int run_command(Context& ctx, const RunArgs& args) {
  if (args.command.empty() && args.shell.empty())
    throw Error(ErrorCode::invalid_argument, "no command to run",
                "write the command after --, e.g. `corral run -- make test`, or use --shell 'make && make test'");
  RunRequest request = to_request(args);
  if (args.shards_given) return fanout_command(ctx, args, std::move(request));
  RunResult result = run(ctx.leases, request);
  if (result.handle) {
    const SessionHandle& h = *result.handle;
    if (!args.lease_output.empty()) {
      try {
        write_output_file(args.lease_output, handle_to_json(h), "session handle");
      } catch (const Error& e) {
        ctx.ui.error(e);
        if (!result.error && result.exit_code == 0) result.exit_code = e.exit_code();
      }
    }
    if (result.error) ctx.ui.error(*result.error);
    if (h.kept && !h.reused)
      ctx.ui.note(fmt::format("kept sandbox {} (lease {}): rerun with --id {}; stop with `{}`", h.slug, h.lease_id,
                              h.slug, h.cleanup_command));
  } else if (result.error) {
    ctx.ui.error(*result.error);
  }
  return result.exit_code;
}

int warmup_command(Context& ctx, const RunArgs& args) {
  SessionHandle handle = warmup(ctx.leases, to_request(args));
  if (!args.lease_output.empty()) write_output_file(args.lease_output, handle_to_json(handle), "session handle");
  ctx.ui.out(handle_to_json(handle));
  return 0;
}

}  // namespace corral::cli
