#include "lease/fanout.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <semaphore>
#include <thread>
#include <vector>

#include "lease/fork.hpp"
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

// One of a fan-out's --max-parallel slots, held by a shard while it acquires its sandbox;
// waiting for one gives way to Ctrl-C and to the fan-out stopping.
class CreationSlot {
 public:
  CreationSlot(std::counting_semaphore<kMaxShards>& slots, Ui& ui) : slots_(slots) {
    while (!slots_.try_acquire_for(std::chrono::milliseconds(50)))
      if (ui.cancelled()) throw Error(ErrorCode::cancelled, "interrupted before the sandbox was created");
    // The fan-out may have stopped while this shard waited: create nothing more then.
    if (ui.cancelled()) {
      slots_.release();
      throw Error(ErrorCode::cancelled, "interrupted before the sandbox was created");
    }
  }
  ~CreationSlot() { slots_.release(); }
  CreationSlot(const CreationSlot&) = delete;
  CreationSlot& operator=(const CreationSlot&) = delete;

 private:
  std::counting_semaphore<kMaxShards>& slots_;
};

// The fork a shard runs in with --from: its lease, and the lock held on it since it was
// made, which the shard's run takes over.
struct ShardFork {
  std::string lease;  // "" = a new sandbox
  std::shared_ptr<LeaseLock> lock;
};

// The slugs of the fan-out's shards, held to its end: a shard's lease may end before
// another shard's is made, which must not get the same slug in the same report.
class ShardSlugs {
 public:
  explicit ShardSlugs(const ClaimStore& claims) : claims_(claims) {}
  void keep(const std::string& slug) {
    SlugHold hold = claims_.hold_slug(slug);
    std::lock_guard guard(mutex_);
    holds_.push_back(std::move(hold));
  }

 private:
  const ClaimStore& claims_;
  std::mutex mutex_;
  std::vector<SlugHold> holds_;
};

// What shard `index` runs: its own command, its variables, its own download folder, and
// `fork`, the fork it runs in with --from; its slug is kept in `slugs` once acquired.
RunRequest shard_request(const FanoutRequest& request, int index, const ShardFork& fork, ShardSlugs& slugs) {
  RunRequest shard = request.run;
  if (!fork.lease.empty()) {
    shard.lease = fork.lease;
    shard.lease_lock = fork.lock;
    shard.release_reused = true;
  }
  shard.command = shard_command(request.run.command, index, request.shards);
  shard.command.env["CORRAL_SHARD_INDEX"] = std::to_string(index);
  shard.command.env["CORRAL_SHARD_COUNT"] = std::to_string(request.shards);
  if (!request.run.downloads.dir.empty())
    shard.downloads.dir = request.run.downloads.dir / fmt::format("shard-{}", index);
  shard.on_acquired = [&request, index, &slugs](const SessionHandle& h) {
    try {
      slugs.keep(h.slug);
    } catch (const std::exception&) {  // on_acquired must not throw; a slug may repeat then
    }
    if (request.on_acquired) request.on_acquired(index, h);
  };
  return shard;
}

// Runs shard `index` through the run's phases, in `ctx` (its own Ui), on the shared
// workspace, acquiring its sandbox in one of the fan-out's creation slots.
ShardOutcome run_shard(LeaseContext& ctx, const FanoutRequest& request, int index, const ShardFork& fork,
                       ShardSlugs& slugs, const SharedWorkspace& shared, std::counting_semaphore<kMaxShards>& slots,
                       ShardTerminal& terminal) {
  const RunRequest shard = shard_request(request, index, fork, slugs);
  RunPhases run(ctx, shard);
  ShardOutcome out;
  try {
    run.prepare(&shared);
    CreationSlot slot(slots, ctx.ui);
    run.acquire();
    out.started = true;
  } catch (const Error& e) {  // refused or interrupted before a sandbox existed
    out.result.error = e;
    out.result.exit_code = e.exit_code();
  } catch (const std::exception& e) {
    out.result.error = Error(ErrorCode::internal, e.what());
    out.result.exit_code = kExitInternal;
  }
  if (out.started) {
    run.sync();
    run.exec();
    run.download();
    out.result = run.cleanup();
  }
  const bool failed = out.result.exit_code != 0;
  out.stopped = failed && terminal.stop.load() && out.result.error && out.result.error->code() == ErrorCode::cancelled;
  // A shard without a sandbox leaves the split suite incomplete: stop the rest at once.
  if (failed && !out.stopped && (request.fail_fast || !out.started)) terminal.stop = true;
  return out;
}

// The lease `from` names (--from), and its provider's spec.
Claim source_claim(LeaseContext& ctx, const FanoutRequest& request) {
  Claim claim = ctx.claims.resolve(request.from);
  require_lease_provider(ctx, claim, request.run.choice, "--from");
  require_not_pooled(claim, "--from");
  return claim;
}

// Makes the forks of --from the shards run in, one per shard, each still locked.
std::vector<ShardFork> fork_for_shards(LeaseContext& ctx, const FanoutRequest& request) {
  Lease source = Lease::attach(ctx, request.from, request.run.choice, Lease::Access::exclusive);
  Forks forks =
      fork_lease(ctx, source, {.count = request.shards, .kept = false, .keep_partial = false, .keep_locked = true});
  std::vector<ShardFork> out;
  for (size_t i = 0; i < forks.made.size(); ++i)
    out.push_back({forks.made[i].lease_id, std::make_shared<LeaseLock>(std::move(forks.locks[i]))});
  return out;
}

// Releases the forks of shards that never took theirs (stopped before they started).
void release_untaken_forks(LeaseContext& ctx, const FanoutRequest& request, const std::vector<ShardFork>& forks,
                           const FanoutResult& result) {
  for (size_t i = 0; i < forks.size(); ++i) {
    if (result.shards[i].started) continue;
    try {
      // Still ours when the shard stopped before taking it over; else its run let go.
      const ShardFork& f = forks[i];
      Lease lease = f.lock->held() ? Lease::adopt(ctx, f.lease, std::move(*f.lock), request.run.choice)
                                   : Lease::attach(ctx, f.lease, request.run.choice, Lease::Access::exclusive);
      lease.release();
    } catch (const Error& e) {
      ctx.ui.warn(fmt::format("could not remove the fork of shard {}: {}; `corral stop --orphans` removes it later",
                              i, e.what()));
    }
  }
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
                "drop --id to fan out, --from LEASE runs the shards in forks of it, or drop --shards to rerun in "
                "the kept sandbox");
  if (!request.from.empty()) {
    const Claim source = source_claim(ctx, request);
    Providers::require(ctx.providers.spec(source.provider), Feature::fork, "--shards --from",
                       ctx.providers.having(Feature::fork));
    return;
  }
  Providers::require(ctx.providers.spec(ctx.providers.resolve(request.run.choice)), Feature::run_session,
                     "--shards");
}

FanoutResult run_fanout(LeaseContext& ctx, const FanoutRequest& asked) {
  check_fanout(ctx, asked);
  // With --from the provider is the lease's, whatever the default.
  FanoutRequest request = asked;
  if (!request.from.empty()) request.run.choice.provider = source_claim(ctx, request).provider;
  Ui& ui = ctx.ui;
  auto cancelled = [&] { return ui.cancelled(); };
  const int n = request.shards;

  // Refused once here rather than once per shard: the plugin and its options, --env.
  FeatureSet features;
  {
    auto session = ctx.providers.open(ctx.providers.resolve(request.run.choice), request.run.choice, ui);
    features = session->spec().features;
  }
  ctx.providers.forwarded_env(request.run.env_names);  // each shard says what it leaves out
  SharedWorkspace shared;
  shared.workspace =
      scan_workspace(request.run.cwd, cancelled, [&](const std::string& m) { ui.warn(m); }, request.run.with_git);
  if (features.has(Feature::archive_sync)) check_workspace_size(shared.workspace, request.run.max_workspace);
  if (uploads_archive(features)) {
    // Forks of a lease synced with this very tree, and no command run in it since, upload
    // nothing: pack only when they will (once for all of them).
    const bool forks_current = !request.from.empty() && [&] {
      const Claim source = source_claim(ctx, request);
      return source.fingerprint == shared.workspace.fingerprint && !source.ran_since_sync;
    }();
    if (!forks_current) shared.archive = pack_archive(shared.workspace, ui, cancelled);
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
  std::vector<LeaseContext> contexts;  // shard i's: the shared claims and providers, its own Ui
  std::counting_semaphore<kMaxShards> slots(request.max_parallel);
  contexts.reserve(static_cast<size_t>(n));  // a shard's leases keep a pointer to its context
  for (int i = 0; i < n; ++i) {
    uis.push_back(std::make_unique<ShardUi>(terminal, i, n, request.output_dir));
    contexts.push_back(LeaseContext{ctx.claims, ctx.providers, *uis.back(), ctx.fleet});
  }
  if (ui.cancelled()) throw Error(ErrorCode::cancelled, "interrupted before anything was created");
  std::vector<ShardFork> forks(static_cast<size_t>(n));
  if (!request.from.empty()) {
    forks = fork_for_shards(ctx, request);
    ui.info(fmt::format("running {} shards in forks of lease {}", n, request.from));
  } else {
    ui.info(fmt::format("running {} shards, creating up to {} sandboxes at once", n, request.max_parallel));
  }

  FanoutResult result;
  result.shards.resize(static_cast<size_t>(n));
  ShardSlugs slugs(ctx.claims);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    try {
      threads.emplace_back([&, i] {
        result.shards[i] = run_shard(contexts[i], request, i, forks[i], slugs, shared, slots, terminal);
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
  if (!request.from.empty()) release_untaken_forks(ctx, request, forks, result);

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

std::vector<ShardSummary> fanout_summary(const FanoutResult& result, const fs::path& output_dir) {
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
    if (!output_dir.empty() && s.started && !s.stopped)
      line.text += fmt::format("; its output is in {} and {}", shard_output_file(output_dir, i, 0).string(),
                               shard_output_file(output_dir, i, 1).string());
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace corral
