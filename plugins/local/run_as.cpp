#include "run_as.hpp"

#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <string>
#include <algorithm>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

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

// Sets the calling thread's fsuid and fsgid; false when the kernel kept others (the
// system calls report the old ids, never an error, so the new ones are read back).
bool set_file_ids(uid_t uid, gid_t gid) {
  ::syscall(SYS_setfsgid, gid);
  ::syscall(SYS_setfsuid, uid);
  return ::syscall(SYS_setfsuid, static_cast<uid_t>(-1)) == static_cast<long>(uid) &&
         ::syscall(SYS_setfsgid, static_cast<gid_t>(-1)) == static_cast<long>(gid);
}

// Throws internal for a switch of file identity the kernel refused.
void switched(bool ok, const char* to) {
  if (!ok) throw Error(ErrorCode::internal, std::string("cannot take the ") + to + "'s file access in a copy thread");
}

// Runs `body` on up to `count` threads of their own (at least one) and waits for all;
// rethrows the first failure.
void on_own_threads(unsigned count, const std::function<void()>& body) {
  // Threads, not forked children: a child of a multi-threaded process may find the
  // allocator's (or any library's) lock held by a thread it does not have, and wait for ever.
  std::mutex mutex;
  std::exception_ptr failure;
  std::vector<std::thread> workers;
  auto run = [&] {
    try {
      body();
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!failure) failure = std::current_exception();
    }
  };  // each thread's credentials end with it
  try {
    for (unsigned i = 0; i < count; ++i) workers.emplace_back(run);
  } catch (const std::system_error&) {
    if (workers.empty()) throw;  // no thread at all: nothing ran
    // No more threads to be had: the ones there are do the work.
  }
  for (std::thread& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
}

// Runs `body` on a thread of its own, rethrowing what it throws.
void on_own_thread(const std::function<void()>& body) {
  on_own_threads(1, body);
}

// Throws internal naming `step`, which failed with errno, of entering `dir` as `uid`.
[[noreturn]] void cannot_enter(const std::filesystem::path& dir, uid_t uid, const char* step) {
  const int err = errno;  // before building the message, which may allocate
  throw Error(ErrorCode::internal, std::string("cannot enter ") + dir.string() + " as uid " + std::to_string(uid) +
                                       ": " + step + ": " + std::strerror(err));
}

}  // namespace

void FileAccess::as_caller() {
  if (user_) switched(set_file_ids(::geteuid(), ::getegid()), "caller");
}

void FileAccess::as_user() {
  if (user_) switched(set_file_ids(user_->uid, user_->gid), "jail user");
}

void run_copying_as(const std::optional<JailUser>& user, const std::filesystem::path& dir,
                    const std::function<void(FileAccess&)>& work, unsigned threads) {
  on_own_threads(std::max(1u, threads), [&] {
    if (::unshare(CLONE_FS) != 0) cannot_enter(dir, ::getuid(), "unshare the working folder");
    if (::chdir(dir.c_str()) != 0) cannot_enter(dir, ::getuid(), "enter");
    ::umask(0);  // this thread's alone since the unshare
    if (user && ::syscall(SYS_setgroups, 0, nullptr) != 0) cannot_enter(dir, user->uid, "drop supplementary groups");
    FileAccess access(user);
    access.as_user();
    work(access);
  });
}

void run_as(const JailUser& user, const std::filesystem::path& dir, const std::function<void()>& work) {
  run_as(std::optional<JailUser>(user), dir, work);
}

void run_as(const std::optional<JailUser>& user, const std::filesystem::path& dir, const std::function<void()>& work) {
  on_own_thread([&] {
    if (const char* step = enter_as(user, dir)) cannot_enter(dir, user ? user->uid : ::getuid(), step);
    work();
  });
}

}  // namespace corral::local
