// The run contract, implemented once for every provider. A Lease is one sandbox at one
// provider together with its local claim, its lock and the open provider session; every
// command that touches a lease goes through it. run() and warmup() are the contract's
// two entry points: prepare (refuse what can be refused before anything is created),
// acquire or reuse, sync, exec, then keep or release, handing back the session handle on
// every path once a sandbox exists.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <semaphore>
#include <string>
#include <vector>

#include "lease/claims.hpp"
#include "workspace/downloads.hpp"
#include "lease/handle.hpp"
#include "workspace/packed_workspace.hpp"
#include "plugin_host/providers.hpp"
#include "workspace/workspace.hpp"

namespace corral {

// What lease operations need: the claims of this machine and the providers.
struct LeaseContext {
  const ClaimStore& claims;
  Providers& providers;
  // A fan-out's bound on sandboxes being created at once (--max-parallel); null = none.
  std::counting_semaphore<64>* creations = nullptr;
  Ui& ui() const { return providers.ui(); }
};

// What to copy back from the sandbox after the command (--download).
struct DownloadOptions {
  bool wanted() const { return !patterns.empty(); }
  std::vector<std::string> patterns;  // globs relative to the command's folder; empty = none
  std::filesystem::path dir;          // where they land; empty = .corral/runs/<lease-id>/
  std::uint64_t max_bytes = 256ull << 20;
};

class Lease {
 public:
  enum class Access {
    exclusive,  // locked for this process, waiting while another corral uses it (run, stop)
    observe,    // not locked: reading state or asking for a URL must not wait for a run
  };

  // A new sandbox from `session`'s provider, labelled as this host's, its claim written
  // before anything else is done with it; a sandbox whose claim cannot be written is
  // destroyed before the error is reported. The lease is locked until released. The
  // sandbox enforces `network` for its whole life (the caller checked the provider can).
  static Lease create(LeaseContext& ctx, std::unique_ptr<ProviderSession> session, const std::string& workspace_root,
                      const NetworkPolicy& network = {});
  // The lease whose id or slug is `id`, resolved once, with its provider opened. Throws
  // not-found (listing the leases there are) or config for a corrupt claim.
  static Lease attach(LeaseContext& ctx, const std::string& id, const ProviderChoice& choice, Access access);
  // The lease of an already read claim (for commands over every lease).
  static Lease attach(LeaseContext& ctx, const Claim& claim, const ProviderChoice& choice, Access access);

  Lease(Lease&&) noexcept;
  Lease& operator=(Lease&&) noexcept;
  ~Lease();

  const Claim& claim() const { return claim_; }
  const ProviderSpec& spec() const { return session_->spec(); }
  ProviderSession& session() { return *session_; }
  bool reused() const { return reused_; }

  // The sandbox as the provider sees it now. Not-found explains that the sandbox is gone
  // and how to forget the lease.
  const Sandbox& live();
  // Brings the sandbox's workspace to `ws`: nothing for a mounted tree or an unchanged
  // one; else the archive unpacked over the previous sync, with the files deleted
  // locally since then removed. `packed` is `ws` already packed (a fan-out's); null = pack here.
  // A reused lease whose sandbox went meanwhile fails as live() does.
  void sync(const Workspace& ws, const std::function<bool()>& cancelled, const PackedArchive* packed = nullptr);
  // Runs `command` in the sandbox, streaming its output; returns its exit code. A reused
  // lease whose sandbox went meanwhile fails as live() does.
  int exec(const Command& command);
  // Copies the files matching `options.patterns` (relative to the command's folder `cwd`)
  // from the sandbox into `dir` (run-downloads). Never throws: a failure is in the
  // summary's error, and the command's outcome stands.
  DownloadSummary download(const DownloadOptions& options, const std::string& cwd, const DownloadFolder& dir,
                           const std::function<bool()>& cancelled);
  // Records that the user keeps the sandbox; `corral stop` removes it later.
  void keep();
  // Destroys the sandbox (one already gone counts as destroyed) and forgets the lease.
  void release();
  // The URL of `port` in the sandbox (url-bridge).
  std::string url(int port);
  // Extends the sandbox's lifetime by `seconds` from now (keep-alive); the updated sandbox.
  Sandbox extend(std::int64_t seconds);
  // The session handle of this lease (neither kept nor reused yet, no exit code).
  SessionHandle handle() const;

 private:
  Lease(LeaseContext& ctx, Claim claim, std::unique_ptr<ProviderSession> session, LeaseLock lock, bool reused);
  // The not-found error of a lease whose sandbox is gone, from the provider's own `cause`.
  Error gone(const Error& cause) const;
  // Runs `step`; when it fails with not-found on a reused lease and get() confirms the
  // sandbox is gone, throws gone() instead, so every step says it the same way.
  void confirming_gone(const std::function<void()>& step);

  LeaseContext* ctx_;
  Claim claim_;
  std::unique_ptr<ProviderSession> session_;
  LeaseLock lock_;
  bool reused_ = false;
  std::optional<Sandbox> sandbox_;  // the live sandbox once known
};

struct RunRequest {
  ProviderChoice choice;
  std::string lease;  // --id: reuse this lease
  bool keep = false;
  bool keep_on_failure = false;
  Command command;                     // argv or shell; env and cwd are filled in by run()
  std::vector<std::string> env_names;  // --env NAME
  std::uint64_t max_workspace = 0;
  std::filesystem::path cwd;
  DownloadOptions downloads;
  std::optional<NetworkPolicy> network;  // --network; nullopt = the configured default
  // Set by a fan-out (fanout.hpp) for each shard: the workspace it scanned and packed once
  // (null = scan and pack here) and variables added to the command's environment.
  std::shared_ptr<const SharedWorkspace> shared_workspace;
  StringMap extra_env;
  // Called once a sandbox is acquired, with its handle (not kept, no exit code yet), so
  // a handle exists even if corral dies before the end. Must not throw.
  std::function<void(const SessionHandle&)> on_acquired;
};

struct RunResult {
  int exit_code = 0;
  std::optional<SessionHandle> handle;  // set once a sandbox was acquired
  std::optional<Error> error;
};

// Runs a command under the run contract; after acquisition it never throws (failures
// are in the result, with the handle).
RunResult run(LeaseContext& ctx, const RunRequest& request);
// Acquires and syncs a sandbox without running anything, and keeps it. A warmup that
// cannot finish leaves nothing behind.
SessionHandle warmup(LeaseContext& ctx, const RunRequest& request);

}  // namespace corral
