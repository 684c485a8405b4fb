// Fan-out (`corral run --shards N`): one command in N new sandboxes of one provider at
// once, so a test runner splits its suite. Shard i sees CORRAL_SHARD_INDEX=i (0-based) and
// CORRAL_SHARD_COUNT=N, and "{shard}" / "{shards}" in its command are replaced by them.
// The workspace is scanned and packed once and the same archive uploaded to every shard.
// Each shard runs the run's phases (run.hpp) in its own thread, under the run contract:
// keep rules per shard, a handle per shard once it has a sandbox, and nothing left behind
// otherwise. At most --max-parallel shards acquire a sandbox at once.
//
// Threads: run_fanout() is called from one thread and starts one thread per shard, which
// share the context's claims and providers (whose registry it loads first) and each report
// to a ShardUi of their own over the caller's Ui (shard_ui.hpp); it returns once every
// shard's thread has ended. The other functions start no thread.
//
// Stopping: Ctrl-C stops every shard. A shard that cannot get a sandbox (quota, say) stops
// the whole fan-out: a split suite with a missing part is no result, and sandboxes already
// started would only cost money; they are cleaned up unless --keep / --keep-on-failure.
// With fail-fast, the first shard that fails stops the others the same way.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "lease/run.hpp"

namespace corral {

constexpr int kMaxShards = 64;
constexpr int kDefaultMaxParallel = 4;

struct FanoutRequest {
  RunRequest run;    // what every shard runs, before substitution
  int shards = 0;    // 1..kMaxShards
  int max_parallel = kDefaultMaxParallel;  // sandboxes being created at once
  bool fail_fast = false;
  std::filesystem::path output_dir;  // --shard-output: one file per shard and stream; empty = prefixed lines
  // --from: the shards run in forks of this kept lease (fork.hpp), made at once through the
  // provider's fork and released by the keep rules; the lease itself is left as it was.
  std::string from;
  // RunRequest::on_acquired for shard `index`; called from the shards' threads, several at
  // once: it must be safe so, and must not throw.
  std::function<void(int index, const SessionHandle&)> on_acquired;
};

struct ShardOutcome {
  RunResult result;
  bool stopped = false;  // cancelled by the fan-out (fail-fast, another shard), not failed on its own
  bool started = false;  // got a sandbox
};

struct FanoutResult {
  // 0 when every shard passed; else the exit code of the lowest-numbered shard that failed
  // on its own (130 when only the user's Ctrl-C stopped them).
  int exit_code = 0;
  std::vector<ShardOutcome> shards;  // by index
};

// Refuses, before anything is created, a fan-out that cannot run: N outside 1..64, a
// --max-parallel below 1, reuse of a lease (--id), a provider without run-session (or,
// with --from, without fork).
void check_fanout(LeaseContext& ctx, const FanoutRequest& request);
// Runs the fan-out; after check_fanout() and the workspace scan it never throws. Before
// them it throws as run() does before anything was created. The shards' threads call
// `ctx.ui`'s cancelled() at once, and its other methods one at a time (shard_ui.hpp).
FanoutResult run_fanout(LeaseContext& ctx, const FanoutRequest& request);
// `command` for shard `index` of `count`: "{shard}" and "{shards}" replaced in every argv
// word and in the shell text.
Command shard_command(const Command& command, int index, int count);
// What to tell the user about one shard that did not pass.
struct ShardSummary {
  std::string text;  // "shard 2/4 failed with exit code 3"
  std::string hint;  // how to fix it, when known
  bool stopped = false;
};
// One summary per shard that did not pass, by index; with `output_dir` (--shard-output),
// each one that ran names the files its output went to.
std::vector<ShardSummary> fanout_summary(const FanoutResult& result, const std::filesystem::path& output_dir = {});

}  // namespace corral
