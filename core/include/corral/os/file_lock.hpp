// Locks on files and folders that several corral processes share (a lease, a pool, a
// staging folder, a sandbox record), exclusive unless asked shared, and that another
// process may remove:
// whoever removes one does so holding its lock, so a process that waited for the lock
// must check, once it has it, that the name still leads to what it locked; if not it
// holds nothing anyone else can see and must start again with a new one.
//
// Threads: a FileLock belongs to one thread at a time. Two FileLocks of one file in one
// process exclude each other as two processes do (flock is per open file description).
// A lock goes with its descriptor: when the object is destroyed or the process dies.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "corral/os/unique_fd.hpp"

namespace corral::os {

// True when `path` (not followed if it is a link) names the file open as `fd`.
bool still_named(int fd, const std::filesystem::path& path);

// How a wait for a lock (or a slot) is told to give up and reports that it waits.
struct WaitHooks {
  std::function<void()> on_wait;     // called once, when still held after a first poll
  std::function<bool()> cancelled;   // polled between waits; true ends the wait (Error cancelled)
};

// Whether a lock excludes every other holder or only exclusive ones.
enum class LockMode { exclusive, shared };

class FileLock {
 public:
  FileLock() = default;
  // A lock already taken on `fd` (e.g. a folder just made), now held by this object.
  explicit FileLock(UniqueFd fd) : fd_(std::move(fd)) {}
  bool held() const { return fd_.valid(); }
  int fd() const { return fd_.get(); }

  // Locks the file at `path`, made (mode 0600) when missing and never through a link,
  // waiting (polled every 50 ms, so Ctrl-C is heard) while another holds it, and taking
  // the lock again when the name was removed or replaced meanwhile. `what` names what the
  // lock guards in errors ("lease 0123ab"): cancelled when `hooks.cancelled` says so,
  // config for a link planted at the path, internal (quota for a full disk) when it
  // cannot be opened.
  static FileLock acquire(const std::filesystem::path& path, const std::string& what, const WaitHooks& hooks = {},
                          LockMode mode = LockMode::exclusive);
  // The same without waiting: nullopt while another holds it.
  static std::optional<FileLock> try_acquire(const std::filesystem::path& path, const std::string& what);
  // Takes the lock of the open `fd` the same way (polled, cancellable); throws as acquire().
  static void lock_polling(int fd, const std::string& what, const WaitHooks& hooks = {},
                           LockMode mode = LockMode::exclusive);
  // The lock of `fd` (a file or folder just made, or one found), taken at once: nullopt
  // when another holds it. For what has no lock file of its own (a staging folder, an
  // archive being built), whose name its holder checks with still_named.
  static std::optional<FileLock> try_lock(UniqueFd fd);
  // True when another process (or another FileLock in this one) holds the lock of the
  // file at `path` right now; false when it is free or not there. Never creates the file.
  static bool held_elsewhere(const std::filesystem::path& path);
  // The same, counting shared holders too.
  static bool held_at_all(const std::filesystem::path& path);

 private:
  UniqueFd fd_;
};

}  // namespace corral::os
