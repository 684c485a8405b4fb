#include "lease/fanout.hpp"

#include <fmt/format.h>

#include <memory>
#include <semaphore>
#include <thread>

#include "lease/shard_ui.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

// `text` with every `from` replaced by `to`.
std::string replace_all(std::string text, std::string_view from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string substitute(const std::string& text, int index, int count) {
  return replace_all(replace_all(text, "{shard}", std::to_string(index)), "{shards}", std::to_string(count));
}

// Runs shard `index`: its own command and environment, the shared workspace, its own Ui.
ShardOutcome run_shard(LeaseContext& ctx, const FanoutRequest& request, int index,
                       const std::shared_ptr<const SharedWorkspace>& shared, ShardTerminal& terminal) {
  RunRequest shard = request.run;
  shard.command = shard_command(request.run.command, index, request.shards);
  shard.extra_env["CORRAL_SHARD_INDEX"] = std::to_string(index);
  shard.extra_env["CORRAL_SHARD_COUNT"] = std::to_string(request.shards);
  if (!request.run.downloads.dir.empty())
    shard.downloads.dir = request.run.downloads.dir / fmt::format("shard-{}", index);
  shard.shared_workspace = shared;
  if (request.on_acquired) shard.on_acquired = [&request, index](const SessionHandle& h) { request.on_acquired(index, h); };
  ShardOutcome out;
  try {
    out.result = run(ctx, shard);
  } catch (const Error& e) {  // refused or interrupted before a sandbox existed
    out.result.error = e;
    out.result.exit_code = e.exit_code();
  } catch (const std::exception& e) {
    out.result.error = Error(ErrorCode::internal, e.what());
    out.result.exit_code = kExitInternal;
  }
  out.started = out.result.handle.has_value();
  const bool failed = out.result.exit_code != 0;
  out.stopped = failed && terminal.stop.load() && out.result.error && out.result.error->code() == ErrorCode::cancelled;
  // A shard without a sandbox leaves the split suite incomplete: stop the rest at once.
  if (failed && !out.stopped && (request.fail_fast || !out.started)) terminal.stop = true;
  return out;
}

}  // namespace

Command shard_command(const Command& command, int index, int count) {
  Command c = command;
  for (std::string& word : c.argv) word = substitute(word, index, count);
  c.shell = substitute(c.shell, index, count);
  return c;
}

void check_fanout(LeaseContext& ctx, const FanoutRequest& request) {
  if (request.shards < 1 || request.shards > kMaxShards)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--shards {}: a fan-out runs 1 to {} sandboxes", request.shards, kMaxShards),
                "e.g. --shards 4");
  if (request.max_parallel < 1 || request.max_parallel > kMaxShards)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--max-parallel {}: give 1 to {} sandboxes created at once", request.max_parallel,
                            kMaxShards),
                fmt::format("the default is {}", kDefaultMaxParallel));
  if (!request.run.lease.empty())
    throw Error(ErrorCode::invalid_argument, "--shards cannot reuse a lease (--id): every shard needs a new sandbox",
                "drop --id to fan out, or drop --shards to rerun in the kept sandbox");
  Providers::require(ctx.providers.spec(ctx.providers.resolve(request.run.choice)), Feature::run_session,
                     "--shards");
}

FanoutResult run_fanout(LeaseContext& ctx, const FanoutRequest& request) {
  check_fanout(ctx, request);
  Ui& ui = ctx.ui();
  auto cancelled = [&] { return ui.cancelled(); };
  const int n = request.shards;

  // Refused once here rather than once per shard: the plugin and its options, --env.
  bool archive_sync = false;
  {
    auto session = ctx.providers.open(ctx.providers.resolve(request.run.choice), request.run.choice);
    archive_sync = session->has(Feature::archive_sync);
  }
  ctx.providers.forwarded_env(request.run.env_names);
  auto shared = std::make_shared<SharedWorkspace>();
  shared->workspace = scan_workspace(request.run.cwd, cancelled, [&](const std::string& m) { ctx.ui().warn(m); });
  if (archive_sync) {
    check_workspace_size(shared->workspace, request.run.max_workspace);
    shared->archive = pack_archive(shared->workspace, ui, cancelled);
  }
  if (!request.output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(request.output_dir, ec);
    if (ec)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--shard-output: cannot create {}: {}", request.output_dir.string(), ec.message()),
                  "give --shard-output a folder you can write to");
  }

  ShardTerminal terminal(ui);
  std::vector<std::unique_ptr<ShardUi>> uis;
  std::vector<std::unique_ptr<Providers>> providers;
  std::vector<std::unique_ptr<LeaseContext>> contexts;
  std::counting_semaphore<kMaxShards> creations(request.max_parallel);
  for (int i = 0; i < n; ++i) {
    uis.push_back(std::make_unique<ShardUi>(terminal, i, n, request.output_dir));
    providers.push_back(std::make_unique<Providers>(ctx.providers.with_ui(*uis.back())));
    contexts.push_back(std::make_unique<LeaseContext>(LeaseContext{ctx.claims, *providers.back(), &creations}));
  }
  if (ui.cancelled()) throw Error(ErrorCode::cancelled, "interrupted before anything was created");
  ui.info(fmt::format("running {} shards, creating up to {} sandboxes at once", n, request.max_parallel));

  FanoutResult result;
  result.shards.resize(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    try {
      threads.emplace_back([&, i] {
        result.shards[i] = run_shard(*contexts[i], request, i, shared, terminal);
        uis[i]->flush();
      });
    } catch (const std::system_error& e) {  // no thread for this shard: it and the rest cannot run
      terminal.stop = true;
      for (int j = i; j < n; ++j) {
        result.shards[j].result.error =
            Error(ErrorCode::unavailable, fmt::format("cannot start a thread for the shard: {}", e.what()));
        result.shards[j].result.exit_code = kExitUnavailable;
      }
      break;
    }
  }
  for (std::thread& t : threads) t.join();

  for (const ShardOutcome& s : result.shards)
    if (s.result.exit_code != 0 && !s.stopped) {
      result.exit_code = s.result.exit_code;
      break;
    }
  if (result.exit_code == 0)  // only stopped shards failed (cannot happen without a failure, but never say 0)
    for (const ShardOutcome& s : result.shards)
      if (s.result.exit_code != 0) {
        result.exit_code = s.result.exit_code;
        break;
      }
  return result;
}

std::vector<ShardSummary> fanout_summary(const FanoutResult& result) {
  std::vector<ShardSummary> out;
  const int n = static_cast<int>(result.shards.size());
  for (int i = 0; i < n; ++i) {
    const ShardOutcome& s = result.shards[static_cast<size_t>(i)];
    if (s.result.exit_code == 0) continue;
    ShardSummary line;
    const std::string who = fmt::format("shard {}/{}", i, n);
    if (s.stopped) {
      line.stopped = true;
      line.text = fmt::format("{} cancelled: stopped because another shard failed", who);
    } else if (s.result.error && !s.started) {
      line.text = fmt::format("{} could not start: {}", who, s.result.error->what());
      line.hint = s.result.error->hint();
    } else if (s.result.error) {
      line.text = fmt::format("{} failed: {}", who, s.result.error->what());
      line.hint = s.result.error->hint();
    } else {
      line.text = fmt::format("{} failed with exit code {}", who, s.result.exit_code);
    }
    if (s.result.handle && s.result.handle->kept)
      line.text += fmt::format(" (sandbox {} kept)", s.result.handle->slug);
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace corral
