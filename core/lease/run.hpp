// The run contract, implemented once for every provider, as its six phases:
//   prepare   refuse what can be refused before anything is created or paid for
//   acquire   reuse the lease named by --id, or create a sandbox and its claim
//   sync      bring the sandbox's workspace to the local tree
//   exec      run the command, streaming its output
//   download  copy back the files --download names
//   cleanup   keep or release the sandbox by the keep rules, and hand back the handle
// run() is those six in order; warmup() is prepare, acquire and sync, then keep; a fan-out
// (fanout.hpp) runs them for each shard, with a workspace it scanned once and a bound on
// how many shards acquire at once.
//
// Pipelined start: where the sandbox needs an archive of the workspace (archive-sync) and
// will not find this one already there (a reused lease's fingerprint), prepare() ends by
// starting a packer thread, so packing overlaps acquire (create, or the reused sandbox's
// get and resume); sync() waits for the archive, then uploads it. The packer is stopped
// and joined on every way out (failure, Ctrl-C, cleanup, destruction): it never outlives
// the RunPhases, nor does its archive.
//
// Threads: a RunPhases and the RunRequest it reads belong to one thread (its packer
// thread reads only the workspace and Ui::cancelled()). Runs on several
// threads may share one LeaseContext's claims and providers, each with its own Ui
// (lease.hpp); run() and warmup() are safe so. RunRequest::on_acquired is called on the
// run's thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lease/lease.hpp"
#include "lease/pool.hpp"
#include "workspace/background_pack.hpp"

namespace corral {

struct RunRequest {
  ProviderChoice choice;
  std::string lease;  // --id: reuse this lease
  bool keep = false;
  bool keep_on_failure = false;
  // argv or shell, and variables of its own in env (a fan-out's shard index); the run adds
  // the forwarded ones (--env, the config's env list) beside them, its own winning, and
  // sets cwd to the command's folder in the sandbox.
  Command command;
  std::vector<std::string> env_names;  // --env NAME
  std::string term;  // with command.tty: the user's TERM, which the command's terminal gets ("" = xterm)
  // --secret NAME=HOST,...: read from the environment in prepare, never seen by the command.
  std::vector<std::string> secrets;
  std::uint64_t max_workspace = 0;
  std::filesystem::path cwd;
  bool with_git = false;  // --git: the checkout's .git folder goes into the sandbox too
  DownloadOptions downloads;
  std::optional<NetworkPolicy> network;  // --network; nullopt = the configured default
  // --idle (or the config's `idle:`): what the sandbox does once idle instead of being
  // deleted, asked of the provider only for a sandbox the run may keep; "" = its usual end.
  std::string idle;
  bool idle_given = false;  // on the command line: refused where it cannot apply, not ignored
  // With `lease`: the lease was made for this run (a fork of `run --shards --from`), so the
  // keep rules release it like a new sandbox instead of always keeping it.
  bool release_reused = false;
  // With `lease`: it may be run from another working tree than the one it holds, whose
  // files the sync then puts in it (--switch-tree); else that is refused, naming both.
  bool switch_tree = false;
  // With `lease`: its lock, which this process already holds (the fan-out made the fork
  // and kept it locked since); the run takes it over instead of waiting for it.
  std::shared_ptr<LeaseLock> lease_lock;
  // Take a ready sandbox from the warm pool this run's sandbox would belong to, when there
  // is one (pool.hpp); false = --no-pool. `refill` starts a refill of the pool once one
  // is taken (a front end's own way to start one detached); unset = none.
  bool use_pool = true;
  RefillFn refill;
  // Called once a sandbox is acquired, with its handle (not kept, no exit code yet), so
  // a handle exists even if corral dies before the end. Must not throw.
  std::function<void(const SessionHandle&)> on_acquired;
};

struct RunResult {
  int exit_code = 0;
  std::optional<SessionHandle> handle;  // set once a sandbox was acquired
  std::optional<Error> error;
};

// One run, phase by phase. Call prepare() and acquire(), then sync(), exec(), download()
// and cleanup(), each once and in this order (warmup stops after sync() with keep_warm()).
// prepare() and acquire() throw, leaving nothing behind: no sandbox exists yet, or the one
// just made is destroyed again. From the end of acquire() on nothing throws: a failure is
// recorded for the result, and the phases after it do nothing but download the results
// (unless the user stopped the run) and clean up.
class RunPhases {
 public:
  enum class Purpose {
    command,  // run the request's command (run())
    warmup,   // make, sync and keep a sandbox for later runs; the command is ignored
  };

  // Borrows `ctx` and `request`, which must outlive this object.
  RunPhases(LeaseContext& ctx, const RunRequest& request, Purpose purpose = Purpose::command);
  RunPhases(const RunPhases&) = delete;
  RunPhases& operator=(const RunPhases&) = delete;

  // Opens the provider (or attaches the lease to reuse, waiting for its lock), checks the
  // request against what it can do, chooses the network policy, forwards the environment
  // and scans the workspace, refusing whatever is wrong with a precise error. `shared` is
  // the workspace a fan-out scanned (and packed) once for every shard; it must outlive
  // this object; null = scanned here. Throws cancelled after Ctrl-C.
  void prepare(const SharedWorkspace* shared = nullptr);
  // Takes the reused lease, or creates the sandbox and writes its claim; then calls
  // on_acquired and confirms a reused sandbox still exists, resuming it if paused. Throws when no sandbox could
  // be acquired; after that, failures are recorded.
  void acquire();
  // Uploads the workspace (nothing for a mounted or unchanged tree), unless Ctrl-C came first.
  void sync();
  // Runs the command, unless Ctrl-C came first; its exit code becomes the run's.
  void exec();
  // Copies back what --download names, once the command ran, on every outcome but Ctrl-C;
  // a stop during the download makes the run interrupted (130) whatever the command did.
  void download();
  // Keeps the sandbox (--keep, --keep-on-failure after a failure, and always a reused
  // lease) or releases it, and returns the result with its handle and timings.
  RunResult cleanup();
  // Warmup's end: keeps the synced sandbox and returns its handle; when anything failed,
  // releases the sandbox (warning if even that fails) and throws why.
  SessionHandle keep_warm();

 private:
  // Ends the running phase's timing (if any) and starts `phase`'s; null starts none.
  void start(const char* phase);
  // Runs `step` unless a phase before it failed, recording its failure.
  void guarded(const std::function<void()>& step);
  // Records `error` as the run's failure.
  void fail(Error error);
  // acquire's last step: a reused lease whose sandbox is paused is resumed, saying so.
  void resume_if_paused();
  // A ready sandbox of the warm pool this run's would belong to, or nullopt (also when
  // the run may not take one: see run.cpp).
  std::optional<Lease> take_from_pool();
  // Throws cancelled with `what` once the user asked to stop.
  void stop_if_cancelled(const char* what) const;
  const ProviderSpec& spec() const;
  const Workspace& workspace() const;

  // prepare()'s steps, in order.
  void open_provider();
  void read_secrets();
  void check_features() const;
  void choose_idle();
  // Whether the keep rules may keep a sandbox this run creates (--keep, --keep-on-failure,
  // warmup); false: it is released at the end, whatever happens.
  bool may_keep() const;
  // CreateRequest::workspace_bytes for --max-workspace and the scanned workspace.
  std::uint64_t workspace_bytes() const;
  void choose_network();
  void build_command();
  // A command on a provider without exec-stdin reads nothing: refused when input waits.
  void pass_stdin();
  // lease_->exec(command_), with -t the user's terminal handed to the command meanwhile.
  ExecResult exec_on_terminal();
  void take_workspace(const SharedWorkspace* shared);
  void check_workspace() const;
  // prepare()'s end: starts the packer when sync() will upload an archive of its own.
  void start_packing();
  // The packed archive, waiting for the packer; records its time as the "pack" timing.
  PackedArchive take_packed();

  LeaseContext& ctx_;
  const RunRequest& request_;
  const Purpose purpose_;
  std::function<bool()> cancelled_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();  // the run's start
  const char* phase_ = nullptr;  // the phase being timed
  std::unique_ptr<PhaseSpan> phase_span_;  // its span, when the Ui traces
  std::chrono::steady_clock::time_point phase_start_;
  std::vector<PhaseTiming> timings_;

  std::optional<Lease> reused_;               // prepare: the lease --id names
  std::unique_ptr<ProviderSession> session_;  // prepare: the provider of a new sandbox
  NetworkPolicy network_;
  std::vector<Secret> secrets_;  // the values, for the provider's egress alone
  std::string idle_;  // asked of create: the request's idle action, where it applies
  Command command_;
  std::optional<Workspace> scanned_;  // the workspace when scanned here
  const SharedWorkspace* shared_ = nullptr;

  std::optional<Lease> lease_;  // acquire on
  SessionHandle handle_;
  RunResult result_;
  bool ran_ = false;     // the command started: its results may be worth downloading
  bool ended_ = false;   // the command ended by itself (not killed on a stop), with its exit code
  bool failed_ = false;  // for --keep-on-failure: an error, or the command's non-zero exit
  // prepare to sync: packing the workspace meanwhile. Last, so it stops before the
  // workspace it reads goes.
  std::unique_ptr<BackgroundPack> packer_;
};

// Runs a command under the run contract: the six phases in order. Throws before a sandbox
// was acquired; after that never (failures are in the result, with the handle).
RunResult run(LeaseContext& ctx, const RunRequest& request);
// Acquires and syncs a sandbox without running anything, and keeps it. A warmup that
// cannot finish leaves nothing behind and throws why.
SessionHandle warmup(LeaseContext& ctx, const RunRequest& request);

}  // namespace corral
