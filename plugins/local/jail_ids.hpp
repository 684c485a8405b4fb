// The identities local jails run as when corral is root: one uid (and the gid of the same
// number) per sandbox, from a range no user, group or subordinate range of this machine
// holds, so no process outside the sandbox shares it. A host-wide register, one file per
// uid in a folder only root may enter, says which sandbox holds each; it survives
// reboots as kept sandboxes do. docs/architecture.md gives the range and the reasons.
//
// Threads and processes: every function may run in several threads and corral processes
// at once; a uid is taken under the lock of its register file, so two sandboxes never get
// the same one.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>

#include "corral/os/file_lock.hpp"
#include "jail_user.hpp"

namespace corral::local {

// The first uid of corral's range and how many it holds: 0x7C000000 up, above the
// container ranges systemd hands out (0x00080000-0x6FFFFFFF) and below its foreign range
// (0x7FFE0000) and 2^31, past which tools misread ids as negative.
inline constexpr uid_t kJailIdFirst = 0x7C000000;
inline constexpr uid_t kJailIdCount = 0x10000;

// True when `uid` is in corral's range.
bool is_jail_id(uid_t uid);

// A uid taken for the sandbox whose folder will be `owner`: registered, and locked until
// this object goes (or commit() is called and then it goes), so no other corral takes
// the registration for stale while the sandbox's folder is not in place yet. Without
// commit() the registration is removed again: the sandbox was never made.
class JailIdReservation {
 public:
  JailIdReservation(JailUser user, std::filesystem::path file, os::FileLock lock)
      : user_(user), file_(std::move(file)), lock_(std::move(lock)) {}
  JailIdReservation(JailIdReservation&&) noexcept = default;
  JailIdReservation& operator=(JailIdReservation&&) noexcept;
  ~JailIdReservation();
  const JailUser& user() const { return user_; }
  // The sandbox's folder is in place: the uid stays registered to it.
  void commit() { committed_ = true; }

 private:
  void drop();
  JailUser user_;
  std::filesystem::path file_;
  os::FileLock lock_;
  bool committed_ = false;
};

class JailIds {
 public:
  // The register in `dir` (made, mode 0700, when missing) of the uids from `first` on,
  // `count` of them. `taken_elsewhere`: whether this machine knows a uid already (the
  // user and group databases, /etc/subuid and /etc/subgid). Tests narrow the range and
  // plant clashes; corral uses the defaults.
  explicit JailIds(std::filesystem::path dir = default_dir(),
                   std::function<bool(uid_t)> taken_elsewhere = known_to_this_machine, uid_t first = kJailIdFirst,
                   uid_t count = kJailIdCount);
  // /var/lib/corral/jail-ids.
  static std::filesystem::path default_dir();
  // True when a user or group of `uid` exists, or a subordinate range of /etc/subuid or
  // /etc/subgid holds it.
  static bool known_to_this_machine(uid_t uid);

  // A free uid of corral's range, registered to the sandbox folder `owner`. A
  // registration whose folder is gone (its corral was killed, or the folder removed by
  // hand) is free again. Throws unavailable when the register cannot be written or the
  // range is full.
  JailIdReservation reserve(const std::filesystem::path& owner) const;
  // Removes `uid`'s registration when it is `owner`'s; nothing otherwise.
  void release(uid_t uid, const std::filesystem::path& owner) const;
  // The sandbox folder `uid` is registered to, or "" when it is free.
  std::filesystem::path owner_of(uid_t uid) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path file_of(uid_t uid) const { return dir_ / std::to_string(uid); }
  // Makes the register's folder when missing; throws unavailable when it cannot.
  void ensure_dir() const;
  std::filesystem::path dir_;
  std::function<bool(uid_t)> taken_elsewhere_;
  uid_t first_;
  uid_t count_;
};

}  // namespace corral::local
