// `corral run` and `corral warmup` as any front end asks for them: what the user gave,
// as text where the user typed text (sizes, durations, the network policy), checked in
// one place, with every default resolved here (the idle action from the config, the
// refill of a pool taken from), and run under the run contract (lease/run.hpp).
//
// Threads: as lease/run.hpp: a run belongs to its thread, several may share a Session.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lease/fanout.hpp"
#include "lease/run.hpp"
#include "service/session.hpp"

namespace corral::service {

// What a new sandbox is to be.
struct SandboxSpec {
  ProviderChoice provider;             // its name ("" = the configured one) and option flags
  std::vector<std::string> env;        // the variables to forward, by name, or to set: NAME=VALUE
  std::vector<std::filesystem::path> env_files;  // files of NAME=VALUE lines to set (env above wins)
  std::string max_workspace = "512M";  // a size; "0" = no limit
  std::optional<std::string> network;  // a policy (open, none, allow:...); nullopt = the configured
  std::string idle;                    // pause | stop | "" (the config's, else the provider's end)
  std::filesystem::path cwd;           // the folder the command runs from
  bool git = false;                    // send the checkout's .git folder too
};

// Several shards of one run at once (--shards).
struct FanoutSpec {
  bool wanted = false;  // a fan-out was asked for; the rest applies only then
  int shards = 0;
  bool fail_fast = false;
  std::optional<int> max_parallel;
  std::string shard_output;         // a folder for each shard's output files
  std::optional<std::string> from;  // run the shards in forks of this kept lease
};

struct RunSpec {
  SandboxSpec sandbox;
  std::string lease;  // reuse this kept lease (its id or slug); "" = a new sandbox
  bool keep = false;
  bool keep_on_failure = false;
  bool no_pool = false;
  bool switch_tree = false;       // with lease: sync this working tree into it, though it holds another
  std::vector<std::string> argv;  // the command, or
  std::string shell;              // a /bin/sh -c string
  std::string timeout;            // a duration ("10m", "1.5s"); "" = none
  // The command reads the user's input (a front end whose user pipes something in); the
  // service refuses input waiting for a provider that cannot pass it on.
  bool forward_stdin = false;
  bool no_stdin = false;  // --no-stdin, as the command line said it (forward_stdin decides)
  // -t: the command runs on a terminal of its own, the user's input its keys; `term` is the
  // user's TERM for it ("" = xterm).
  bool tty = false;
  bool interactive = false;  // -i: stdin passed on, which it is anyway (for the docker habit, -it)
  std::string term;
  // How long a command passed the user's stop signal has to end before it is killed
  // ("500ms", "10s"); "" = 10 s.
  std::string stop_timeout;
  std::vector<std::string> secrets;  // NAME=HOST[,HOST...], each value from the variable NAME
  std::vector<std::string> downloads;
  std::string download_dir;
  std::string max_download = "256M";
  FanoutSpec fanout;
};

// The run `spec` asks for; throws invalid-argument naming what cannot be used (a size, a
// duration, a policy, options that do not go together, no command).
RunRequest run_request(Session& session, Ui& ui, const RunSpec& spec);
// The fan-out `spec` asks for (spec.fanout.wanted), checked as run_request does.
FanoutRequest fanout_request(Session& session, Ui& ui, const RunSpec& spec);

// Runs `spec` under the run contract, reporting to `ui`; `on_acquired` hears the handle
// as soon as a sandbox exists. Throws before a sandbox was acquired, never after.
RunResult run(Session& session, Ui& ui, const RunSpec& spec,
              std::function<void(const SessionHandle&)> on_acquired = {});
// Runs `spec`'s shards; `on_acquired` hears each shard's handle as it gets its sandbox
// (from the shards' threads, several at once).
FanoutResult run_shards(Session& session, Ui& ui, const RunSpec& spec,
                        std::function<void(int index, const SessionHandle&)> on_acquired = {});
// A sandbox made as `spec` says, synced and kept, ready for a run by its lease;
// `on_acquired` hears its handle as soon as it exists (not kept yet), as a run's does.
SessionHandle warmup(Session& session, Ui& ui, const SandboxSpec& spec,
                     std::function<void(const SessionHandle&)> on_acquired = {});

}  // namespace corral::service
