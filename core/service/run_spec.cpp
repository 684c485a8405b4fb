#include "service/run_spec.hpp"

#include <fmt/format.h>

#include "base/env_file.hpp"
#include "base/printable.hpp"
#include "base/sizes.hpp"
#include "corral/os/read_file.hpp"
#include "corral/errors.hpp"

namespace corral::service {
namespace {

// An environment file is a few lines: anything larger is a mistake.
constexpr std::uint64_t kMaxEnvFileBytes = 1 << 20;

// The part of a run's request that makes its sandbox.
RunRequest sandbox_request(Session& session, Ui& ui, const SandboxSpec& spec) {
  RunRequest r;
  r.choice = spec.provider;
  for (const std::filesystem::path& file : spec.env_files) {
    const std::optional<std::string> text = os::read_regular_file(file, kMaxEnvFileBytes, "--env-file");
    if (!text)
      throw Error(ErrorCode::invalid_argument, fmt::format("--env-file {}: no such file", printable(file.string())));
    for (const auto& [name, value] : parse_env_file(*text, file.string())) r.env_names.push_back(name + "=" + value);
  }
  r.env_names.insert(r.env_names.end(), spec.env.begin(), spec.env.end());
  r.max_workspace = parse_size(spec.max_workspace);
  r.cwd = spec.cwd.empty() ? std::filesystem::current_path() : spec.cwd;
  r.with_git = spec.git;
  if (spec.network) r.network = parse_network_policy(*spec.network);
  r.idle = spec.idle.empty() ? session.config().idle().value_or("") : spec.idle;
  r.idle_given = !spec.idle.empty();
  r.refill = session.refill(ui);
  return r;
}

void check_fanout_options(const FanoutSpec& f) {
  if (!f.wanted && (f.fail_fast || !f.shard_output.empty() || f.max_parallel || f.from))
    throw Error(ErrorCode::invalid_argument,
                "--fail-fast, --max-parallel, --shard-output and --from only apply to a fan-out",
                "add --shards N, e.g. `corral run --shards 4 --fail-fast -- make test`");
}

}  // namespace

RunRequest run_request(Session& session, Ui& ui, const RunSpec& spec) {
  check_fanout_options(spec.fanout);
  if (spec.argv.empty() && spec.shell.empty())
    throw Error(ErrorCode::invalid_argument, "no command to run",
                "write the command after --, e.g. `corral run -- make test`, or use --shell 'make && make test'");
  if (!spec.shell.empty() && !spec.argv.empty())
    throw Error(ErrorCode::invalid_argument, "give either --shell 'COMMAND' or a command after --, not both");
  RunRequest r = sandbox_request(session, ui, spec.sandbox);
  r.lease = spec.lease;
  r.keep = spec.keep;
  r.keep_on_failure = spec.keep_on_failure;
  r.use_pool = !spec.no_pool;
  if (spec.switch_tree && spec.lease.empty())
    throw Error(ErrorCode::invalid_argument, "--switch-tree only applies with --id",
                "e.g. `corral run --id calm-otter --switch-tree -- make test`");
  r.switch_tree = spec.switch_tree;
  r.downloads.patterns = spec.downloads;
  r.downloads.dir = spec.download_dir;
  r.downloads.max_bytes = parse_size(spec.max_download);
  if (!spec.downloads.empty() && r.downloads.max_bytes == 0)
    throw Error(ErrorCode::invalid_argument, "--max-download must be above 0", "e.g. --max-download 1G");
  if (spec.downloads.empty() && !spec.download_dir.empty())
    throw Error(ErrorCode::invalid_argument, "--download-dir without --download", "add --download PATH_OR_GLOB");
  if (!spec.timeout.empty()) set_timeout(r.command, parse_duration_ms(spec.timeout));
  if (!spec.stop_timeout.empty()) r.command.stop_timeout_ms = parse_duration_ms(spec.stop_timeout);
  r.command.forward_stdin = spec.forward_stdin || spec.tty;
  r.command.tty = spec.tty;
  r.term = spec.term;
  if (spec.interactive && spec.no_stdin)
    throw Error(ErrorCode::invalid_argument, "-i passes stdin on and --no-stdin closes it", "drop one of them");
  if (spec.tty && spec.no_stdin)
    throw Error(ErrorCode::invalid_argument, "-t and --no-stdin do not go together: a terminal's keys are its input",
                "drop one of them");
  r.secrets = spec.secrets;
  if (!spec.shell.empty()) r.command.shell = spec.shell;
  else r.command.argv = spec.argv;
  return r;
}

FanoutRequest fanout_request(Session& session, Ui& ui, const RunSpec& spec) {
  FanoutRequest fan;
  fan.run = run_request(session, ui, spec);
  // One input cannot be read by N commands: it is refused when there is some, not split.
  if (fan.run.command.forward_stdin && ui.input_waiting())
    throw Error(ErrorCode::invalid_argument, "--shards runs the command N times, so the input piped in has no one command to go to",
                "add --no-stdin to run the shards with an empty stdin, or give each shard its input as a file");
  fan.run.command.forward_stdin = false;
  if (fan.run.command.tty)
    throw Error(ErrorCode::invalid_argument, "-t gives one command a terminal; --shards runs N", "drop -t or --shards");
  fan.shards = spec.fanout.shards;
  fan.fail_fast = spec.fanout.fail_fast;
  fan.max_parallel = spec.fanout.max_parallel.value_or(kDefaultMaxParallel);
  fan.output_dir = spec.fanout.shard_output;
  if (spec.fanout.from) fan.from = *spec.fanout.from;
  return fan;
}

RunResult run(Session& session, Ui& ui, const RunSpec& spec, std::function<void(const SessionHandle&)> on_acquired) {
  RunRequest request = run_request(session, ui, spec);
  request.on_acquired = std::move(on_acquired);
  LeaseContext ctx = session.context(ui);
  return corral::run(ctx, request);
}

FanoutResult run_shards(Session& session, Ui& ui, const RunSpec& spec,
                        std::function<void(int index, const SessionHandle&)> on_acquired) {
  FanoutRequest fan = fanout_request(session, ui, spec);
  fan.on_acquired = std::move(on_acquired);
  LeaseContext ctx = session.context(ui);
  return run_fanout(ctx, fan);
}

SessionHandle warmup(Session& session, Ui& ui, const SandboxSpec& spec,
                     std::function<void(const SessionHandle&)> on_acquired) {
  LeaseContext ctx = session.context(ui);
  RunRequest request = sandbox_request(session, ui, spec);
  request.on_acquired = std::move(on_acquired);
  return corral::warmup(ctx, request);
}

}  // namespace corral::service
