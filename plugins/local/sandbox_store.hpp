// Local sandboxes on disk: one folder per sandbox under the state dir, holding its
// metadata and the workspace the jail binds.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/os/file_lock.hpp"
#include "corral/os/folder_writer.hpp"
#include "corral/types.hpp"
#include "jail_ids.hpp"
#include "jail_user.hpp"

namespace corral::local {

struct LocalSandbox {
  std::string id;
  std::string slug;
  std::string created_at;
  StringMap labels;
  bool no_network = false;  // created with network policy none or allow: commands get a network of their own
  // With no_network, created with --network allow:: the entries its commands reach through
  // the egress proxy (none: no way out at all).
  std::vector<std::string> egress;
  bool paused = false;      // `corral pause`: commands refused until resumed
  // Its workspace is a tmpfs held by the corral process that made it (a run that never
  // keeps it), not the folder's workspace/: gone with that process.
  bool in_memory = false;
  // Who its jails run as when that is not the caller (corral is root): a uid of its own
  // from corral's range (jail_ids.hpp), which owns its workspace. A sandbox made by a
  // corral from before had none (its jails ran as nobody): it is refused.
  std::optional<JailUser> user;
  // The most bytes each of its workspace and /tmp may hold on disk (SizeGuard), from the
  // bound of the run that made it (--max-workspace plus a block a file); 0 = the disk's.
  std::uint64_t size_limit = 0;
};

class SandboxStore {
 public:
  // `ids`: where each sandbox gets a user of its own, when jails do not run as the caller
  // (corral is root). Its workspace then belongs to that user, and everything done
  // inside one is done as it.
  explicit SandboxStore(std::filesystem::path root, std::optional<JailIds> ids = std::nullopt)
      : root_(std::move(root)), ids_(std::move(ids)) {}
  const std::filesystem::path& root() const { return root_; }
  // True when each sandbox's jails run as a user of its own (corral is root).
  bool own_users() const { return ids_.has_value(); }
  const std::optional<JailIds>& ids() const { return ids_; }
  // Creates a new sandbox folder, its metadata and (unless `in_memory`: a tmpfs holds
  // it) its empty workspace and /tmp folders; returns it with a fresh id and, with own_users(), a
  // user of its own. `size_limit`: LocalSandbox::size_limit.
  LocalSandbox create(const std::string& slug, const StringMap& labels, bool no_network = false,
                      bool in_memory = false, const std::vector<std::string>& egress = {},
                      std::uint64_t size_limit = 0) const;
  // A new sandbox whose workspace and /tmp are copies of `source`'s as they are now (fork), with its
  // own slug and labels and the source's network policy (its allow list too) and size limit. Throws not-found when `source`
  // is gone; a failed copy leaves no folder behind.
  LocalSandbox fork(const LocalSandbox& source, const std::string& slug, const StringMap& labels) const;
  // Adds `report`'s counts to what the sandbox's commands asked for so far (a file beside
  // its metadata, merged under a lock so commands running at once all count; at most
  // kMaxEgressListed destinations a side, the rest counted as one "(others)").
  void add_egress(const std::string& id, const EgressReport& report) const;
  // What the sandbox's commands asked for so far; nullopt before any asked, or when the
  // file cannot be read.
  std::optional<EgressReport> egress_of(const std::string& id) const;
  static constexpr size_t kMaxEgressListed = 256;
  // When the last copy of the user's tree into its workspace ended (copy_workspace's
  // `copied_at`); nullopt before any, or when unreadable (every file is copied then).
  std::optional<timespec> copied_at(const std::string& id) const;
  // Records it, beside the metadata, where the sandbox's commands cannot reach.
  void set_copied_at(const std::string& id, const timespec& when) const;
  // Records the sandbox as paused or not (its metadata, replaced atomically).
  void set_paused(LocalSandbox& sandbox, bool paused) const;
  // The sandbox with `id`, or nullopt when its folder or metadata is gone.
  std::optional<LocalSandbox> find(const std::string& id) const;
  std::vector<LocalSandbox> all() const;
  // Removes the sandbox's folder, including files the command made read-only (the
  // workspace's contents as its user when it has one), and frees its user.
  void remove(const std::string& id) const;
  std::filesystem::path dir_of(const std::string& id) const;
  std::filesystem::path workspace_of(const std::string& id) const { return dir_of(id) / "workspace"; }
  // The folder its commands see as /tmp (and $HOME), kept from one command to the next.
  std::filesystem::path tmp_of(const std::string& id) const { return dir_of(id) / "tmp"; }
  // tmp_of(s) when it is there and owned as its workspace must be; empty for an in-memory
  // sandbox or one made before /tmp was kept, whose commands each get a fresh one.
  std::string kept_tmp(const LocalSandbox& s) const;
  // Makes sure the sandbox's on-disk workspace is there to copy into: made by the
  // caller when jails run as the caller; else it must be the sandbox user's (require_workspace).
  void prepare_workspace(const LocalSandbox& s) const;
  // True when the workspace is a real folder owned by the sandbox's user (any, when
  // jails run as the caller).
  bool workspace_owned(const LocalSandbox& s) const;
  // Throws Error(unavailable) with a way out unless workspace_owned(s).
  void require_workspace(const LocalSandbox& s) const;

 private:
  // Writes the sandbox's metadata file atomically.
  void write_metadata(const LocalSandbox& s) const;
  // The same into `dir`, the sandbox's folder or its staging folder.
  void write_metadata(const LocalSandbox& s, const std::filesystem::path& dir) const;
  // Makes a new staging folder, sets `staging` to it and returns it open and locked.
  os::FileLock make_staging_folder(std::filesystem::path& staging) const;
  // Removes the staging folder of a create whose process is gone (killed half-way): one
  // nobody holds locked, and last changed at least `min_age` ago.
  void remove_if_maker_gone(const std::filesystem::path& staging,
                            std::chrono::seconds min_age = std::chrono::seconds(0)) const;
  // Where create() builds a sandbox folder before renaming it into place; a listing
  // removes one at once when nobody holds it locked.
  static constexpr std::string_view staging_prefix = ".new-";
  // Where a staging folder is made and locked before it takes its staging name, so no
  // listing ever finds one not yet locked; a listing removes one only once it is a minute
  // old (its maker killed between its mkdir and its rename, a few system calls).
  static constexpr std::string_view making_prefix = ".mk-";
  static constexpr std::chrono::seconds abandoned_making_age{60};

  // The user the sandbox folder `id` gives its workspace: its record's, else (a record
  // unreadable) the owner of its workspace folder when that is one of corral's range.
  std::optional<JailUser> user_of(const std::string& id) const;

  std::filesystem::path root_;
  std::optional<JailIds> ids_;
};

}  // namespace corral::local
