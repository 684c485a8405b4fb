#include "corral/os/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "corral/os/errno_error.hpp"

namespace fs = std::filesystem;

namespace corral::os {
namespace {

// The lock file at `path`, opened (made 0600 when missing) without following a link.
UniqueFd open_lock_file(const fs::path& path, const std::string& what) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600));
  if (fd.valid()) return fd;
  const int err = errno;
  if (err == ELOOP)
    throw Error(ErrorCode::config,
                "the lock file " + path.string() + " of " + what + " is a symbolic link, which corral never follows",
                "remove it (`rm " + path.string() + "`): corral makes it anew");
  throw errno_error(write_error_code(err), "cannot open the lock file " + path.string() + " of " + what, err);
}

}  // namespace

bool still_named(int fd, const fs::path& path) {
  struct stat held {}, named {};
  return ::fstat(fd, &held) == 0 && ::fstatat(AT_FDCWD, path.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
         held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

void FileLock::lock_polling(int fd, const std::string& what, const WaitHooks& hooks, LockMode mode) {
  int busy = 0;
  while (::flock(fd, (mode == LockMode::shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK && err != EINTR) throw errno_error(ErrorCode::internal, "cannot lock " + what, err);
    // Said once it is still held after a poll: a lock held for a moment (a listing that
    // looks whether it is held at all) is not worth a note.
    if (++busy == 2 && hooks.on_wait) hooks.on_wait();
    if (hooks.cancelled && hooks.cancelled()) throw Error(ErrorCode::cancelled, "stopped waiting for " + what);
    ::usleep(50'000);
  }
}

FileLock FileLock::acquire(const fs::path& path, const std::string& what, const WaitHooks& hooks, LockMode mode) {
  bool said = false;  // once, though a lock file replaced meanwhile means waiting again
  const WaitHooks once{[&] {
                         if (!said && hooks.on_wait) hooks.on_wait();
                         said = true;
                       },
                       hooks.cancelled};
  while (true) {
    FileLock lock(open_lock_file(path, what));
    lock_polling(lock.fd(), what, once, mode);
    if (still_named(lock.fd(), path)) return lock;
  }
}

std::optional<FileLock> FileLock::try_acquire(const fs::path& path, const std::string& what) {
  while (true) {
    FileLock lock(open_lock_file(path, what));
    if (::flock(lock.fd(), LOCK_EX | LOCK_NB) != 0) return std::nullopt;
    if (still_named(lock.fd(), path)) return lock;
  }
}

std::optional<FileLock> FileLock::try_lock(UniqueFd fd) {
  if (!fd.valid() || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return std::nullopt;
  return FileLock(std::move(fd));
}

bool FileLock::held_elsewhere(const fs::path& path) {
  // Read-only and never created: looking must not make lock files.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  return fd.valid() && ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

bool FileLock::held_at_all(const fs::path& path) {
  // Taken for a moment when free: a waiter polls, so it only waits one more poll.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  return fd.valid() && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

}  // namespace corral::os
