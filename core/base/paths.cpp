#include "base/paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "base/environment.hpp"
#include "corral/option_default.hpp"
#include "corral/os/fd_write.hpp"
#include "corral/os/folder_writer.hpp"

namespace fs = std::filesystem;

namespace corral::paths {

fs::path state_dir() { return xdg_folder("XDG_STATE_HOME", process_env) / "corral"; }
fs::path cache_dir() { return xdg_folder("XDG_CACHE_HOME", process_env) / "corral"; }
fs::path config_dir() { return xdg_folder("XDG_CONFIG_HOME", process_env) / "corral"; }

fs::path etc_dir() {
  const char* v = std::getenv("CORRAL_ETC_DIR");
  return v && *v ? fs::path(v) : fs::path("/etc/corral");
}

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

fs::path shipped_registry() {
  return (executable_dir() / CORRAL_REGISTRY_RELPATH).lexically_normal();
}

namespace {

// Why `dir` cannot be corral's `what` folder: the user's to fix (config), or a full disk (quota).
Error folder_error(const fs::path& dir, const std::string& what, const std::string& why, int err = 0) {
  const bool full = err && os::write_error_code(err) == ErrorCode::quota;
  return Error(full ? ErrorCode::quota : ErrorCode::config,
               fmt::format("cannot use {} as corral's {}: {}", dir.string(), what, why),
               full ? "free space on its disk"
                    : "make it a folder of yours that you can write, or point XDG_STATE_HOME elsewhere");
}

}  // namespace

void make_private_folder(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const int err = ec ? ec.value() : errno;
    throw folder_error(dir, what, fmt::format("it cannot be created: {}", std::strerror(err)), err);
  }
  if (S_ISLNK(st.st_mode))
    throw folder_error(dir, what, "it is a symbolic link, which corral does not follow there (remove it: corral makes "
                                  "the folder anew)");
  if (!S_ISDIR(st.st_mode)) throw folder_error(dir, what, "it is not a folder");
  if (st.st_uid != ::geteuid())
    throw folder_error(dir, what, fmt::format("it belongs to uid {}, not to you (uid {})", st.st_uid, ::geteuid()));
  if ((st.st_mode & 07777) == 0700) return;
  // Through a descriptor of the folder itself: a link swapped in since the check is never followed.
  const os::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0 || ::fchmod(fd.get(), 0700) != 0)
    throw folder_error(dir, what, fmt::format("it cannot be made private: {}", std::strerror(errno)), errno);
}

}  // namespace corral::paths
