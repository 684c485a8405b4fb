#include "jail_exec_file.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "corral/errors.hpp"

namespace corral::local {
namespace {

// Whether the permission bits of `st` let `user` execute it (root: any execute bit).
bool may_execute(const struct stat& st, const JailUser& user) {
  if (user.uid == 0) return st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH);
  if (st.st_uid == user.uid) return st.st_mode & S_IXUSR;
  if (st.st_gid == user.gid) return st.st_mode & S_IXGRP;
  return st.st_mode & S_IXOTH;
}

}  // namespace

std::filesystem::path jail_exec_path() {
  Dl_info self{};
  if (::dladdr(reinterpret_cast<void*>(&jail_exec_path), &self) == 0 || !self.dli_fname)
    throw Error(ErrorCode::internal, "the local plugin cannot tell where its own file is");
  return (std::filesystem::path(self.dli_fname).parent_path() / CORRAL_JAIL_EXEC_RELPATH).lexically_normal();
}

sdk::UniqueFd open_jail_exec(const std::optional<JailUser>& as_user) {
  const JailUser user = as_user ? *as_user : JailUser{::geteuid(), ::getegid()};
  const std::filesystem::path path = jail_exec_path();
  // Non-blocking: a FIFO in its place is refused below, not waited on.
  sdk::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || !may_execute(st, user)) {
    const std::string why = fd.get() < 0         ? std::strerror(errno)
                            : !S_ISREG(st.st_mode) ? "not a file"
                                                   : "uid " + std::to_string(user.uid) + " may not execute it";
    throw Error(ErrorCode::unavailable, "the local provider's jail starter " + path.string() + " is unusable: " + why,
                "reinstall corral: the starter installs with the local plugin, in <prefix>/libexec/corral");
  }
  return fd;
}

}  // namespace corral::local
