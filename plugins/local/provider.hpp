// The local provider: sandboxes on this machine, each a folder whose workspace is bound
// into a bubblewrap jail for every command. The default provider: no account needed.
//
// Threads: an instance is called from one thread at a time, as corral/sdk.hpp says of
// every provider; the in-memory sandboxes it holds are guarded by a mutex all the same.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bwrap.hpp"
#include "corral/sdk.hpp"
#include "jail_ids.hpp"
#include "jail_namespaces.hpp"
#include "jail_process.hpp"
#include "sandbox_store.hpp"
#include "size_guard.hpp"

namespace corral::local {

class LocalProvider : public sdk::Provider {
 public:
  // Refuses a workdir that cannot hold the workspace before any sandbox exists.
  explicit LocalProvider(const sdk::Options& options);

  std::vector<DoctorCheck> doctor(const sdk::Host&) override;
  Sandbox create(const CreateRequest& request, const sdk::Host&) override;
  Sandbox get(const std::string& id, const sdk::Host&) override { return to_sandbox(existing(id)); }
  std::vector<Sandbox> list(const StringMap& labels, const sdk::Host&) override;
  void destroy(const Sandbox& sandbox, const sdk::Host&) override;

  // tree-sync: the listed files are copied from the working tree, over what a kept
  // sandbox holds (files its commands made survive a re-sync, which makes reuse fast).
  void upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host) override;

  ExecResult exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) override;
  // The archive is made inside the jail, by the sandbox's own view of its files: a link
  // the command planted cannot make corral read anything of this machine.
  DownloadResult download(const Sandbox& sandbox, const DownloadRequest& request, const sdk::Host& host) override;

  // A local sandbox runs processes only during a command, and a command holds its lease,
  // which pausing takes too: so pausing is a state, under which commands are refused.
  Sandbox pause(const Sandbox& sandbox, const sdk::Host&) override;
  Sandbox resume(const Sandbox& sandbox, const sdk::Host&) override;

  // A copy of the sandbox's folder: reflinks where the file system has them, else a copy.
  std::vector<ForkOutcome> fork(const Sandbox& source, const std::vector<ForkTarget>& targets,
                                const sdk::Host& host) override;

  // http://127.0.0.1:PORT: a local sandbox shares this machine's network, unless it has none.
  std::string url(const Sandbox& sandbox, int port, const sdk::Host&) override;

 private:
  // Whether a workspace bounded by `bytes` (0: unbounded) may live in memory: bounded,
  // and by at most half of it (tmpfs's own default), so a run can never fill the memory.
  static bool fits_in_memory(std::uint64_t bytes);

  // A sandbox whose workspace is a tmpfs of its own, held by this process, for a run that
  // never keeps it; nullopt when this host cannot make one (the caller falls back to disk).
  std::optional<LocalSandbox> create_in_memory(const CreateRequest& request, bool no_network);

  // The namespaces holding in-memory sandbox `s`'s workspace; throws unavailable when
  // another process made it (its workspace is out of reach, and gone with that process).
  std::shared_ptr<JailNamespaces> memory_of(const LocalSandbox& s) const;

  // Where this process reaches `s`'s workspace: its folder, or its tmpfs's open root.
  std::filesystem::path workspace_path(const LocalSandbox& s) const;

  // The folders of `s` on disk that its size limit bounds (none for an in-memory one).
  std::vector<GuardedFolder> guarded_folders(const LocalSandbox& s) const;

  // What a jail of `s` binds; for a folder, checked to be the jail user's first.
  JailWorkspace jail_workspace(const LocalSandbox& s) const;

  // The sandbox `id`; throws not-found when it is gone.
  LocalSandbox existing(const std::string& id) const;

  // The sandbox `id`, which must not be paused: a paused sandbox runs nothing.
  LocalSandbox running(const std::string& id) const;

  // Where jails get users of their own: when corral is root, whose identity they must never share.
  static std::optional<JailIds> jail_ids() { return running_as_root() ? std::optional(JailIds()) : std::nullopt; }

  // A user any jail might run as, for checks made before a sandbox has its own: any uid
  // of corral's range is neither the owner nor the group of corral's files.
  std::optional<JailUser> any_jail_user() const;

  // Who a jail runs as, in the words of doctor's check that bwrap can make one.
  std::string jail_identity() const;

  // Where the jail starter's verification is remembered: corral's cache, as it can be
  // made again (by probing the starter once more).
  static std::string starter_verified();

  // `no_network`: the sandbox's own policy, which the instance's option cannot reopen.
  JailSpec jail_spec(const std::string& bwrap, const std::string& hostname, bool no_network = false) const;

  // Fails with guidance when bwrap or the jail's starter is missing, before a sandbox
  // exists. Whether bwrap can make a jail here shows at the first command (or in `corral
  // doctor`), with the same error and hint, so no run pays for a probe jail.
  void ensure_jail_installed() const;

  // The Sandbox corral sees of `s`: its state and where it lives.
  Sandbox to_sandbox(const LocalSandbox& s) const;

  SandboxStore store_;
  mutable std::mutex memory_mutex_;
  // In-memory sandboxes this process made, by id; destroy() drops one.
  std::map<std::string, std::shared_ptr<JailNamespaces>> in_memory_;
  std::string bwrap_;
  bool network_;
  std::string workdir_;
  std::string egress_ca_file_;  // more CAs the egress proxy verifies secrets' hosts with
};

}  // namespace corral::local
