// A Lease is one sandbox at one provider together with its local claim, its lock and the
// open provider session; every command that touches a lease goes through it. The run
// contract's phases (run.hpp) are built from its steps: create or attach, sync, exec,
// download, keep or release.
//
// Threads: a Lease, like the ProviderSession it owns, belongs to one thread at a time
// (it may be moved to another). Leases on different threads may share one LeaseContext's
// claims and providers, each thread with a context of its own Ui (a fan-out's shards do).
// Exclusive leases of one id exclude each other through the claim's lock, threads of one
// process included, and wait for the commands running in the sandbox (the lock of its
// commands); runs on a provider with exec-concurrent share that one while their commands
// run (Access::run); an observing lease takes no lock and may see the claim change.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lease/claims.hpp"
#include "lease/fleet_gate.hpp"
#include "workspace/downloads.hpp"
#include "lease/handle.hpp"
#include "workspace/packed_workspace.hpp"
#include "plugin_host/providers.hpp"
#include "workspace/workspace.hpp"

namespace corral {

// What lease operations need: the claims of this machine, the providers, and whom to tell.
// Borrowed, never owned: all three outlive every Lease made with the context.
struct LeaseContext {
  const ClaimStore& claims;  // shared by threads (claims.hpp)
  Providers& providers;      // shared by threads once the registry is loaded (providers.hpp)
  // Where this thread's messages and the command's output go. Its out(), err() and
  // cancelled() may also be called from a plugin's own threads during a call.
  Ui& ui;
  // Where new sandboxes are admitted under the user's limits and a provider's 429s
  // (fleet_gate.hpp), shared by threads; null = no limits and no shared backoff.
  const FleetGate* fleet = nullptr;
};

// When a create gives up waiting (for a slot, or for a provider that answers 429): the
// run's --timeout; nullopt = wait for a slot until Ctrl-C, for a provider's 429s up to
// kCreatePatience.
using CreateDeadline = std::optional<std::chrono::steady_clock::time_point>;
inline constexpr std::chrono::minutes kCreatePatience{5};

// What to copy back from the sandbox after the command (--download).
struct DownloadOptions {
  bool wanted() const { return !patterns.empty(); }
  std::vector<std::string> patterns;  // globs relative to the command's folder; empty = none
  std::filesystem::path dir;          // where they land; empty = .corral/runs/<lease-id>/
  std::uint64_t max_bytes = 256ull << 20;
};

// Waits at the context's fleet gate until `provider` may make a sandbox for each of
// `lease_ids` (locked by the caller), saying so on the progress line and as `slot-wait`
// phase events; nothing without a gate. Throws as FleetGate::admit.
void admit_new(LeaseContext& ctx, const std::string& provider, const std::vector<std::string>& lease_ids,
               CreateDeadline deadline = std::nullopt);

// Throws invalid-argument when `choice` names a provider other than `claim`'s: the lease
// `flag` (--id, --from) names already says which provider it is at.
void require_lease_provider(LeaseContext& ctx, const Claim& claim, const ProviderChoice& choice,
                            std::string_view flag);
// Throws invalid-argument when `claim` waits in a warm pool: `flag` (--id, --from) may
// name only a kept lease.
void require_not_pooled(const Claim& claim, std::string_view flag);

class Lease {
 public:
  enum class Access {
    exclusive,  // locked for this process, waiting while another corral uses it (stop, pause)
    // Locked as exclusive, except that on a provider with exec-concurrent a kept lease's
    // lock is let go while its command runs (exec()): another run may then sync and run
    // beside it, while whatever needs the lease exclusive still waits for the command.
    run,
    observe,  // not locked: reading state or asking for a URL must not wait for a run
  };

  // A new sandbox from `session`'s provider, made as `request` says (its workspace, network
  // policy, idle action, ephemeral and workspace bound: the caller checked the provider
  // honours them), with a lease id, slug and this host's labels of its own, tagged as
  // `pool`'s when given (pool.hpp); its claim written before anything else is done with
  // it; a sandbox whose claim cannot be written is destroyed before the error is reported.
  // The lease is locked until released.
  // Takes `session`. Throws the provider's error (or the claim's) with nothing left behind
  // but, when even the destroy failed, a warning naming the sandbox. Threads may create
  // at once through one context: their slugs differ (ClaimStore::hold_new_slug).
  // Admitted first by the context's fleet gate, waiting (and saying so) for a slot; a
  // provider's "not now" (a quota error with retry_after) makes every corral of the
  // machine wait, then this one asks again, until `deadline`; it then throws timeout
  // when the wait was for a slot, else the provider's last error, saying how long it waited.
  static Lease create(LeaseContext& ctx, std::unique_ptr<ProviderSession> session, CreateRequest request,
                      std::optional<PoolTag> pool = std::nullopt, CreateDeadline deadline = std::nullopt);
  // Whether a lease the user names may be one waiting in a warm pool. Only stopping it and
  // reading its state may: a run, fork, pause or --from would hand the user the pool's
  // sandbox while the pool still counts it ready (and a fork would carry its tag).
  enum class Pooled { refuse, allow };

  // The lease whose id or slug is `id`, resolved once, with its provider opened. Throws
  // not-found (listing the leases there are) or config for a corrupt claim, and
  // invalid-argument for a pooled one unless `pooled` allows it; exclusive access waits
  // for the lock (saying so once), and throws cancelled on Ctrl-C.
  static Lease attach(LeaseContext& ctx, const std::string& id, const ProviderChoice& choice, Access access,
                      Pooled pooled = Pooled::refuse);
  // A sandbox taken from a warm pool (pool.hpp): `claim` as read under `lock`, which the
  // caller took and hands over. It syncs like a reused lease (only what changed since
  // the fill) and is released by its run like a new one.
  static Lease adopt_pooled(LeaseContext& ctx, Claim claim, LeaseLock lock, const ProviderChoice& choice);
  // The lease whose id is `id`, attached exclusively with `lock`, its lock, which this
  // process already holds (a fork made for this run) and hands over: attach() would wait
  // for it for ever. Throws not-found when the claim is gone.
  static Lease adopt(LeaseContext& ctx, const std::string& id, LeaseLock lock, const ProviderChoice& choice);
  // The lease of an already read claim (for commands over every lease).
  static Lease attach(LeaseContext& ctx, const Claim& claim, const ProviderChoice& choice, Access access);

  Lease(Lease&&) noexcept;
  Lease& operator=(Lease&&) noexcept;
  ~Lease();

  const Claim& claim() const { return claim_; }
  const ProviderSpec& spec() const { return session_->spec(); }
  ProviderSession& session() { return *session_; }
  bool reused() const { return reused_; }
  bool pooled() const { return pooled_; }

  // The sandbox as the provider sees it now (asked once, then remembered). Not-found
  // explains that the sandbox is gone and how to forget the lease; other errors are the
  // provider's.
  const Sandbox& live();
  // Brings the sandbox's workspace to `ws`: nothing for a mounted tree or an unchanged
  // one; else the archive unpacked over the previous sync (for a tree-sync provider, the
  // listed files copied by its plugin), with the files deleted locally since then removed
  // (a sandbox made for one run records neither its files nor its fingerprint, which only
  // a later sync reads). `packed` is `ws` already packed (once for several runs); null =
  // pack here when the provider takes an archive. Throws the provider's or the claim's
  // error, or cancelled once `cancelled` says so while packing; a reused lease whose
  // sandbox went meanwhile fails as live() does.
  void sync(const Workspace& ws, const std::function<bool()>& cancelled, const PackedArchive* packed = nullptr);
  // True when the sandbox already holds `ws` as it is (a reused or pooled lease synced
  // with this fingerprint, and no command ran in it since): sync uploads nothing.
  bool holds(const Workspace& ws) const {
    return reused_ && !claim_.ran_since_sync && claim_.fingerprint == ws.fingerprint;
  }
  // Runs `command` in the sandbox, streaming its output to the context's Ui; returns its
  // exit code. Ctrl-C and --timeout stop it with cancelled or timeout; a reused lease
  // whose sandbox went meanwhile fails as live() does. A kept lease attached for a run on
  // a provider with exec-concurrent lets its claim's lock go first (see Access::run):
  // afterwards only download() and handle() may be used, and keep(), which it already is.
  ExecResult exec(const Command& command);
  // Copies the files matching `options.patterns` (relative to the command's folder `cwd`)
  // from the sandbox into `dir` (run-downloads). Never throws: a failure is in the
  // summary's error, and the command's outcome stands.
  DownloadSummary download(const DownloadOptions& options, const std::string& cwd, const DownloadFolder& dir,
                           const std::function<bool()>& cancelled);
  // Records that the user keeps the sandbox; `corral stop` removes it later. Throws when
  // the claim cannot be written (the sandbox stays either way).
  void keep();
  // Destroys the sandbox (one already gone counts as destroyed) and forgets the lease.
  // Throws the provider's error, leaving the claim in place for `stop --orphans`.
  void release();
  // The URL of `port` in the sandbox (url-bridge). Throws invalid-argument for a port
  // outside 1-65535, unsupported without url-bridge, else the provider's error.
  std::string url(int port);
  // Extends the sandbox's lifetime by `seconds` from now (keep-alive); the updated sandbox.
  // Throws invalid-argument for seconds <= 0, unsupported without keep-alive.
  Sandbox extend(std::int64_t seconds);
  // Pauses the sandbox (pause-resume) and records it in the claim; the paused sandbox.
  // Throws unsupported without the feature, else the provider's error (not-found as
  // live() explains it).
  Sandbox pause();
  // Resumes a paused sandbox and records it in the claim; the running sandbox. Throws as
  // pause() does; quota when the provider refuses for lack of it.
  Sandbox resume();
  // True when the provider reports the sandbox paused (asks live()).
  bool paused();
  // The session handle of this lease (not kept yet, no exit code).
  SessionHandle handle() const;

 private:
  Lease(LeaseContext& ctx, Claim claim, std::unique_ptr<ProviderSession> session, LeaseLock lock, bool reused);
  // Throws internal naming `step` when this lease let its lock go (exec()), where the
  // step could undo another run's.
  void require_own_lock(std::string_view step) const;
  // Writes the claim, holding the lease's lock.
  void write_claim(Durability durability = Durability::power_loss);
  // The not-found error of a lease whose sandbox is gone, from the provider's own `cause`;
  // made_elsewhere_error() instead when the lease was made through other settings.
  Error gone(const Error& cause) const;
  // True when the claim was made through another account or endpoint than the session's.
  bool made_elsewhere() const;
  // The config error of a lease made elsewhere: what corral did (`outcome`), and the way
  // back (`retry`, the command to run again; empty: "try again").
  Error made_elsewhere_error(std::string_view outcome, std::string_view retry) const;
  // Runs `step`; when it fails with not-found on a reused lease and get() confirms the
  // sandbox is gone, throws gone() instead, so every step says it the same way.
  void confirming_gone(const std::function<void()>& step);

  LeaseContext* ctx_;
  Claim claim_;
  std::unique_ptr<ProviderSession> session_;
  LeaseLock lock_;
  LeaseLock commands_lock_;         // the lock of the sandbox's commands, when attached to use it
  bool shares_commands_ = false;    // commands_lock_ is shared: exec() lets lock_ go
  bool reused_ = false;
  bool pooled_ = false;             // taken from a warm pool
  bool ephemeral_ = false;          // made for one run that releases it (CreateRequest::ephemeral)
  std::optional<Sandbox> sandbox_;  // the live sandbox once known
};

}  // namespace corral
