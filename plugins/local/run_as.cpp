#include "run_as.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "corral/types.hpp"

namespace corral::local {
namespace {

// Becomes `user` in the calling thread only, inside `dir`. Linux keeps credentials, cwd
// and umask per thread; glibc's wrappers apply a change to every thread, so raw syscalls
// are used. Returns the failing step, or nullptr.
const char* enter_as(const std::optional<JailUser>& user, const std::filesystem::path& dir) {
  if (::unshare(CLONE_FS) != 0) return "unshare the working folder";
  if (::chdir(dir.c_str()) != 0) return "enter";
  if (!user) return nullptr;
  // gid before uid: once the uid is dropped the gid can no longer change.
  if (::syscall(SYS_setgroups, 0, nullptr) != 0) return "drop supplementary groups";
  if (::syscall(SYS_setresgid, user->gid, user->gid, user->gid) != 0) return "set gid";
  if (::syscall(SYS_setresuid, user->uid, user->uid, user->uid) != 0) return "set uid";
  return nullptr;
}

}  // namespace

void run_as(const JailUser& user, const std::filesystem::path& dir, const std::function<void()>& work) {
  run_as(std::optional<JailUser>(user), dir, work);
}

void run_as(const std::optional<JailUser>& user, const std::filesystem::path& dir, const std::function<void()>& work) {
  // A thread, not a forked child: a child of a multi-threaded process may find the
  // allocator's (or any library's) lock held by a thread it does not have, and wait for ever.
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      if (const char* step = enter_as(user, dir)) {
        const int err = errno;  // before building the message, which may allocate
        throw Error(ErrorCode::internal, std::string("cannot enter ") + dir.string() + " as uid " +
                                             std::to_string(user ? user->uid : ::getuid()) + ": " + step + ": " + std::strerror(err));
      }
      work();
    } catch (...) {
      failure = std::current_exception();
    }
  });  // the thread's credentials end with it
  worker.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace corral::local
