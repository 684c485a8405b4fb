// Lease claims: the local record that a sandbox belongs to this user, written before
// anything else is done with the sandbox, so nothing corral creates is ever untracked.
// Files are written atomically (temp, fsync, rename) with mode 0600, under a lock.
//
// Threads and processes: the claim files are the shared state, so every ClaimStore
// method may be called from several threads at once, and by several corral processes on
// one folder (a fan-out's shards share one store; two terminals share the folder). Writes
// are atomic renames, so a reader sees a whole claim or none; who may change a lease is
// decided by its lock (lock()), which excludes other threads of this process as much as
// other processes. Errors are corral::Error, as each method says; every method that takes
// a lease id throws invalid-argument for one valid_lease_id() refuses.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/json.hpp"
#include "corral/os/atomic_file.hpp"
#include "corral/os/file_lock.hpp"
#include "corral/types.hpp"

namespace corral {

using os::Durability;
using os::write_file_atomically;

// The longest lease id or slug corral makes is far shorter; a longer --id names none.
constexpr std::size_t kMaxLeaseIdLength = 64;
// True when `id` may name a lease's files: not empty, at most kMaxLeaseIdLength bytes,
// no path separator, not hidden (so never "." or ".."). Lease ids corral makes are hex;
// --id is user input.
bool valid_lease_id(std::string_view id);
// A lease id or slug from the user, shortened and made printable for a message.
std::string shown_lease_name(std::string_view name);

// A sandbox waiting in a warm pool (`corral pool fill`): which pool, and until when it
// may wait. A run takes it by clearing this under the lease's lock (pool.hpp).
struct PoolTag {
  std::string key;          // the pool: provider, its options, network policy, workspace (pool.hpp)
  int size = 0;             // the pool's size when filled, for the refill a run starts
  std::int64_t filled_at = 0;   // Unix seconds
  std::int64_t expires_at = 0;  // Unix seconds: after this it is an orphan (`stop --orphans`)
  bool no_refill = false;       // filled with --no-refill: a run that takes it starts no refill
};

struct Claim {
  std::string lease_id;
  std::string slug;
  std::string provider;
  std::string sandbox_id;
  StringMap details;          // the sandbox's non-secret details
  std::string workspace;      // local working tree the lease was made for
  std::string fingerprint;    // of the last workspace synced into it
  // A command ran in it since that sync: its copy of the tree may differ from what the
  // fingerprint names (a tracked file edited or deleted there), so the next sync sends it.
  bool ran_since_sync = false;
  std::string created_at;     // RFC 3339, UTC
  bool kept = false;          // true once the user asked to keep it
  bool paused = false;        // paused by corral (`corral pause`) and not resumed since
  NetworkPolicy network;      // fixed when the sandbox was created (--network)
  std::string target;         // the identity of the session that made it (ProviderSession::identity)
  std::optional<PoolTag> pool;  // set while the sandbox waits in a warm pool
};

// A lock on one lease, held while a process works with it (os::FileLock): released on
// destruction, and by the kernel if the process dies.
using LeaseLock = os::FileLock;

// One claim file as found on disk: readable, or corrupt with what could be salvaged.
struct ClaimFile {
  std::string lease_id;       // from the file name
  std::optional<Claim> claim;  // set when the file is a valid claim
  std::string problem;        // why it is not, when it is not
  std::string provider;       // salvaged from a corrupt file when readable, else empty
  std::string sandbox_id;     // likewise
};

class SlugHold;

class ClaimStore {
 public:
  explicit ClaimStore(std::filesystem::path dir);
  // $XDG_STATE_HOME/corral/leases.
  static ClaimStore standard();
  const std::filesystem::path& dir() const { return dir_; }

  // Writes `claim` atomically with mode 0600; throws corral::Error on failure, leaving
  // any previous version intact. Durable across a power loss unless told otherwise.
  void write(const Claim& claim, Durability durability = Durability::power_loss) const;
  // The claim with this lease id, or nullopt. A corrupt file throws config, naming the
  // file and how to remove it.
  std::optional<Claim> read(const std::string& lease_id) const;
  // Every readable claim, sorted by creation time; unreadable files are skipped.
  std::vector<Claim> all() const;
  // The file of the claim of `lease_id`; throws invalid-argument for an invalid id.
  std::filesystem::path path_of(const std::string& lease_id) const;
  // Every claim file, corrupt ones included, sorted by lease id (after sweep_stray_files()).
  std::vector<ClaimFile> scan() const;
  // The claim file of `lease_id` as scan() would report it, or nullopt when absent.
  std::optional<ClaimFile> inspect(const std::string& lease_id) const;
  // Removes the claim (and its lock and file list); missing is fine. Call it holding the
  // lease's lock: a process waiting for that lock then takes the next lock file instead.
  void remove(const std::string& lease_id) const;
  // Removes lock files and file lists whose claim is gone and whose lock nobody holds: a
  // corral killed while creating a sandbox, or one that waited for a lease being stopped.
  // scan() does it first.
  void sweep_stray_files() const;

  // The paths of the last workspace synced into the lease's sandbox (empty when none
  // was recorded), kept beside the claim so a re-sync can remove what was deleted.
  std::vector<std::string> synced_files(const std::string& lease_id) const;
  // Records `files` as the lease's synced paths (atomically, mode 0600).
  void write_synced_files(const std::string& lease_id, const std::vector<std::string>& files) const;

  // This claim store's host id: random, made once, labelled on every sandbox created
  // from here so orphan cleanup never touches another machine's sandboxes.
  std::string host_id() const;
  // The claim whose lease id or slug is `id`; throws not-found (listing what exists).
  Claim resolve(const std::string& id) const;

  // Takes the lease's lock; when another process (or thread) holds it, calls `on_wait`
  // once and waits, throwing cancelled as soon as `cancelled` says so (Ctrl-C must not hang
  // on a lock). The callbacks run on the calling thread.
  LeaseLock lock(const std::string& lease_id, const std::function<void()>& on_wait = {},
                 const std::function<bool()>& cancelled = {}) const;
  // Takes the lock only if free.
  std::optional<LeaseLock> try_lock(const std::string& lease_id) const;
  // Takes the lock of the lease's commands, waiting as lock() does: shared by the runs whose
  // commands may run at once in its sandbox (a provider with exec-concurrent), exclusive
  // for every other use of the lease, which must not act under a running command. Taken
  // holding lock(): a run lets that go while its command runs and keeps this one.
  LeaseLock lock_commands(const std::string& lease_id, os::LockMode mode, const std::function<void()>& on_wait = {},
                          const std::function<bool()>& cancelled = {}) const;
  // True when another process (or another lock taken in this one) holds the lease's lock,
  // or a command of the lease runs, right now.
  bool in_use(const std::string& lease_id) const;

  // A slug for a new lease: none of the claims has it, nor any lease being created through
  // this store (or a copy of it) by another thread, whose claim is not written yet. Held
  // until the returned SlugHold is destroyed, which must be after the claim is written.
  // Two corral processes may still pick one slug (resolve() then asks for the lease id).
  SlugHold hold_new_slug() const;
  // Keeps `slug` from hold_new_slug()'s choice while the returned hold lives, though its
  // lease may end meanwhile: a fan-out's shards stay told apart to its end.
  SlugHold hold_slug(const std::string& slug) const;

 private:
  struct HeldSlugs;
  friend class SlugHold;
  void ensure_dir() const;
  std::filesystem::path dir_;
  std::shared_ptr<HeldSlugs> held_;  // shared by copies: they name the same folder
};

// A slug held for a lease being created (ClaimStore::hold_new_slug); let go on destruction.
// Owned by the creating thread.
class SlugHold {
 public:
  ~SlugHold();
  SlugHold(SlugHold&& other) noexcept = default;  // the moved-from one holds nothing
  SlugHold& operator=(SlugHold&&) = delete;
  const std::string& slug() const { return slug_; }

 private:
  friend class ClaimStore;
  SlugHold(std::shared_ptr<ClaimStore::HeldSlugs> held, std::string slug);
  std::shared_ptr<ClaimStore::HeldSlugs> held_;
  std::string slug_;
};

std::string claim_to_json(const Claim& claim);
Claim claim_from_json(std::string_view text, const std::string& what);
// Writes the claim's fields into an open JSON object (shared by storage and listings).
void write_claim_fields(json::Writer& w, const Claim& claim);

}  // namespace corral
