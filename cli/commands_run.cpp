// `corral run` and `corral warmup`.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>

#include "base/sizes.hpp"
#include "commands.hpp"
#include "corral/errors.hpp"
#include "lease/fanout.hpp"
#include "lease/output_file.hpp"
#include "terminal.hpp"
#include "workspace/workspace.hpp"

namespace fs = std::filesystem;

namespace corral::cli {
namespace {

// Writes a handle as soon as a sandbox exists, so one is there even if corral dies before
// the end (which writes it again). A failure here is reported by that last write.
void write_early(const OutputFile& output, const std::string& text) {
  try {
    output.write(text);
  } catch (const Error&) {
  }
}

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
  std::optional<OutputFile> output;
  if (!args.lease_output.empty()) output.emplace(args.lease_output, "session handles");
  // The handles known so far, rewritten as each shard gets its sandbox.
  std::mutex acquired_mutex;
  std::vector<std::optional<SessionHandle>> acquired(static_cast<size_t>(std::max(args.shards, 0)));
  if (output && output->rewritable())
    fan.on_acquired = [&](int index, const SessionHandle& h) {
      std::lock_guard guard(acquired_mutex);
      acquired[static_cast<size_t>(index)] = h;
      write_early(*output, shard_handles_to_json(acquired));
    };
  FanoutResult result = run_fanout(ctx.leases, fan);
  int exit_code = result.exit_code;
  if (output) {
    std::vector<std::optional<SessionHandle>> handles;
    for (const ShardOutcome& s : result.shards) handles.push_back(s.result.handle);
    try {
      output->write(shard_handles_to_json(handles), stop_requested_from_now());
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
  std::optional<OutputFile> output;
  if (!args.lease_output.empty()) output.emplace(args.lease_output, "session handle");
  if (output && output->rewritable())
    request.on_acquired = [&](const SessionHandle& h) { write_early(*output, handle_to_json(h)); };
  RunResult result = run(ctx.leases, request);
  if (result.handle) {
    const SessionHandle& h = *result.handle;
    if (output) {
      try {
        output->write(handle_to_json(h), stop_requested_from_now());
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
  std::optional<OutputFile> output;
  if (!args.lease_output.empty()) output.emplace(args.lease_output, "session handle");
  SessionHandle handle = warmup(ctx.leases, to_request(args));
  if (output) output->write(handle_to_json(handle), stop_requested_from_now());
  ctx.ui.out(handle_to_json(handle));
  return 0;
}

}  // namespace corral::cli
