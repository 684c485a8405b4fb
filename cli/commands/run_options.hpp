// What `corral run` is given, and the part of it `corral warmup` shares: the options of
// a new sandbox.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "context.hpp"
#include "lease/fanout.hpp"
#include "lease/lease.hpp"

namespace corral::cli {

struct SandboxOptions {
  std::string provider;
  std::string lease_output;           // --lease-output FILE: the session handle
  std::vector<std::string> env;       // --env NAME (repeatable)
  std::string max_workspace = "512M";
  std::optional<std::string> network;  // --network POLICY
  std::string idle;                    // --idle pause|stop: what a kept sandbox does once idle
  std::string progress = "auto";       // --progress auto|never|json
};

// `corral run --shards N` and the flags that only apply with it (fanout.hpp).
struct FanoutOptions {
  bool given = false;  // --shards was on the command line
  int shards = 0;
  bool fail_fast = false;
  int max_parallel = kDefaultMaxParallel;
  bool max_parallel_given = false;
  std::string shard_output;
  std::string from;  // --from LEASE: the shards run in forks of this kept lease
};

struct RunOptions {
  SandboxOptions sandbox;
  std::string lease;  // --id: reuse this kept lease
  bool keep = false;
  bool keep_on_failure = false;
  bool no_pool = false;  // --no-pool: never take a sandbox from a warm pool
  std::string timeout;
  std::string shell;
  std::vector<std::string> command;
  std::vector<std::string> downloads;
  std::string download_dir;
  std::string max_download = "256M";
  FanoutOptions fanout;
};

// Registers the options of a new sandbox (--provider, --lease-output, --env,
// --max-workspace, --network) on `app`.
void add_sandbox_options(CLI::App& app, SandboxOptions& options);
// The request `options` describe, run from the current folder; a usage error for values
// that cannot be used (sizes, durations, a network policy, flags that do not go together).
// Sets the --progress mode on ctx's Ui.
RunRequest to_request(Context& ctx, const RunOptions& options);

}  // namespace corral::cli
