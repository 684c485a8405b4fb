// `corral run`: a command in a sandbox under the run contract, or in N at once (--shards).
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>

#include "commands/commands.hpp"
#include "commands/run_options.hpp"
#include "corral/errors.hpp"
#include "lease/fanout.hpp"
#include "service/run_spec.hpp"
#include "lease/handle.hpp"
#include "lease/output_file.hpp"
#include "options.hpp"

namespace corral::cli {
namespace {

// What `corral run` is given: the service's spec, the handle file and the progress mode.
struct RunOptions {
  SandboxOptions sandbox;
  service::RunSpec spec;  // its `sandbox` is filled from the one above when it runs
};

// `corral run --shards N`: the fan-out, its handles file and one summary line per failing shard.
int fanout_command(Context& ctx, const RunOptions& args) {
  std::optional<OutputFile> output;
  if (!args.sandbox.lease_output.empty()) output.emplace(args.sandbox.lease_output, "session handles");
  // The handles known so far, rewritten as each shard gets its sandbox.
  std::mutex acquired_mutex;
  std::vector<std::optional<SessionHandle>> acquired(static_cast<size_t>(std::max(args.spec.fanout.shards, 0)));
  std::function<void(int, const SessionHandle&)> on_acquired;
  if (output && output->rewritable())
    on_acquired = [&](int index, const SessionHandle& h) {
      std::lock_guard guard(acquired_mutex);
      acquired[static_cast<size_t>(index)] = h;
      write_early(*output, shard_handles_to_json(acquired));
    };
  FanoutResult result = service::run_shards(ctx.session, ctx.ui, args.spec, on_acquired);
  int exit_code = result.exit_code;
  if (ctx.trace) ctx.trace->root().attribute("corral.shards", static_cast<std::int64_t>(result.shards.size()));
  std::vector<std::optional<SessionHandle>> handles;
  for (const ShardOutcome& s : result.shards) handles.push_back(s.result.handle);
  if (output) write_final(ctx, *output, shard_handles_to_json(handles), exit_code, false);
  const int n = static_cast<int>(handles.size());
  for (int i = 0; i < n; ++i) {
    const std::optional<SessionHandle>& h = handles[static_cast<size_t>(i)];
    if (h && h->kept)
      ctx.ui.note(fmt::format("[{}/{}] kept sandbox {} (lease {}): stop with `{}`", i, n, h->slug, h->lease_id,
                              h->cleanup_command));
  }
  for (const ShardSummary& line : fanout_summary(result, args.spec.fanout.shard_output)) {
    if (line.stopped) ctx.ui.note(line.text);
    else ctx.ui.error(line.text, line.hint);
  }
  return exit_code;
}

// The run's sandbox and outcome on its trace's root span.
void describe_trace(telemetry::TracedOperation& trace, const RunResult& result) {
  if (result.handle) {
    trace.root().attribute("corral.provider", result.handle->provider);
    trace.root().attribute("corral.lease", result.handle->lease_id);
    trace.root().attribute("corral.sandbox", result.handle->sandbox_id);
    trace.root().attribute("corral.kept", result.handle->kept);
  }
  if (result.error) trace.fail(result.error->what());
}

int run_command(Context& ctx, RunOptions& args) {
  finish_sandbox_options(ctx, args.sandbox);
  args.spec.sandbox = args.sandbox.spec;
  if (args.spec.fanout.wanted) {
    (void)service::fanout_request(ctx.session, ctx.ui, args.spec);  // a bad spec refused before any file is checked
    return fanout_command(ctx, args);
  }
  return run_one(ctx, args.sandbox, args.spec);
}

// The run-only options, in the order --help lists them after the sandbox's.
void add_run_options(CLI::App& app, service::RunSpec& o) {
  names_lease(app.add_option("--id", o.lease, "Reuse the kept lease with this id or slug"));
  app.add_flag("--keep", o.keep, "Keep the sandbox after the run");
  app.add_flag("--keep-on-failure", o.keep_on_failure, "Keep the sandbox when the run fails");
  app.add_flag("--no-pool", o.no_pool, "Create a sandbox even when a warm pool (`corral pool fill`) has one ready");
  app.add_flag("--switch-tree", o.switch_tree,
               "With --id: sync this working tree into the kept sandbox though it holds another one's");
  app.add_option("--secret", o.secrets,
                 "Let the command use the secret in your variable NAME on these hosts without seeing it: it gets a "
                 "placeholder, which the egress replaces on TLS requests to them; NAME alone: as your config "
                 "declares it (repeatable; needs --network allow:)")
      ->allow_extra_args(false)
      ->type_name("NAME[=HOST,...]");
  app.add_option("--timeout", o.timeout, "Stop the command after DURATION (e.g. 10m)");
  app.add_flag("-t,--tty", o.tty,
               "Run the command on a terminal of its own, sized as yours: every key (Ctrl-C too) goes to it "
               "(needs a terminal on stdin)");
  app.add_flag("-i,--interactive", o.interactive,
               "Pass stdin on (the default without -t; -it as with docker)");
  app.add_flag("--no-stdin", o.no_stdin,
               "Give the command an empty stdin; without it, what is piped into corral is the command's input");
  app.add_option("--stop-timeout", o.stop_timeout,
                 "On Ctrl-C or SIGTERM, give the command DURATION to end by the signal it is passed before it is "
                 "killed (default 10s; a second Ctrl-C kills it at once)")
      ->type_name("DURATION");
  app.add_option("--shell", o.shell, "Run this string with /bin/sh -c instead of an argv");
  app.add_option("--download", o.downloads,
                 "After the command, copy back files matching this path or glob, relative to its folder "
                 "(repeatable; also when it fails)")
      ->allow_extra_args(false);
  app.add_option("--download-dir", o.download_dir,
                 "Where downloads land (default: .corral/runs/<lease-id>/ in the working tree)");
  app.add_option("--max-download", o.max_download, "Stop a download past SIZE")->capture_default_str();
  app.add_option("command", o.argv, "The command and its arguments");
}

// --shards and the flags that only apply with it.
void add_fanout_options(CLI::App& app, service::FanoutSpec& o) {
  app.add_option(
      "--shards", o.shards,
      fmt::format("Run the command in N new sandboxes at once (1-{}); shard i gets CORRAL_SHARD_INDEX=i, "
                  "CORRAL_SHARD_COUNT=N, {{shard}} and {{shards}} replaced in the command, output lines "
                  "prefixed [i/N]",
                  kMaxShards));
  app.add_flag("--fail-fast", o.fail_fast, "With --shards: stop every shard once one fails");
  app.add_option("--max-parallel", o.max_parallel,
                 fmt::format("With --shards: create at most M sandboxes at once (default {})", kDefaultMaxParallel));
  app.add_option("--shard-output", o.shard_output,
                 "With --shards: write shard i's output to DIR/shard-i.stdout and .stderr instead");
  names_lease(app.add_option("--from", o.from,
                             "With --shards: run the shards in N forks of this kept lease (the provider's fork), "
                             "removed at the end unless kept; the lease stays as it was"));
}

Runner define(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  add_sandbox_options(app, o->sandbox);
  add_run_options(app, o->spec);
  add_fanout_options(app, o->spec.fanout);
  return [o, cmd = &app](Context& ctx) {
    o->spec.argv.insert(o->spec.argv.end(), ctx.words_after_dashes.begin(), ctx.words_after_dashes.end());
    o->spec.fanout.wanted = cmd->count("--shards") > 0;
    take_terminal(o->spec);
    return run_command(ctx, *o);
  };
}

}  // namespace

int run_one(Context& ctx, const SandboxOptions& sandbox, service::RunSpec& spec) {
  spec.sandbox = sandbox.spec;
  (void)service::run_request(ctx.session, ctx.ui, spec);  // a bad spec refused before any file is checked
  std::optional<OutputFile> output;
  if (!sandbox.lease_output.empty()) output.emplace(sandbox.lease_output, "session handle");
  std::function<void(const SessionHandle&)> on_acquired;
  if (output && output->rewritable()) on_acquired = [&](const SessionHandle& h) { write_early(*output, handle_to_json(h)); };
  RunResult result = service::run(ctx.session, ctx.ui, spec, on_acquired);
  if (ctx.trace) describe_trace(*ctx.trace, result);
  if (!result.handle) {
    if (result.error) ctx.ui.error(*result.error);
    return result.exit_code;
  }
  const SessionHandle& h = *result.handle;
  if (output) write_final(ctx, *output, handle_to_json(h), result.exit_code, result.error.has_value());
  if (result.error) ctx.ui.error(*result.error);
  if (h.kept && !h.reused)
    ctx.ui.note(fmt::format("kept sandbox {} (lease {}): rerun with --id {}; stop with `{}`", h.slug, h.lease_id,
                            h.slug, h.cleanup_command));
  return result.exit_code;
}

void take_terminal(service::RunSpec& spec) {
  // Input is passed on as `ssh host cmd` does, but never a terminal's without -t (that
  // needs a terminal in the sandbox), nor a closed stdin.
  struct stat st {};
  spec.forward_stdin = !spec.no_stdin && ::fstat(0, &st) == 0 && !::isatty(0);
  if (!spec.tty) return;
  if (!::isatty(0))
    throw Error(ErrorCode::invalid_argument, "-t gives the command a terminal, but corral's stdin is not one",
                "run it from a terminal, or drop -t (what is piped into corral reaches the command without it)");
  const char* term = std::getenv("TERM");
  spec.term = term && *term ? term : "";
}

const Command kRun = {
    .name = "run",
    .summary = "Run a command in a sandbox (command after --)",
    .exit_status = "the command's own (with --shards, the lowest failing shard's)",
    .provider_options = true,
    .scans_workspace = true,
    .takes_words_after_dashes = true,
    .define = define,
};

}  // namespace corral::cli
