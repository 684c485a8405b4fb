#include "tree_copy.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"
#include "corral/os/folder_writer.hpp"
#include "file_data.hpp"

namespace corral::local {
namespace {

Error copy_error(const std::string& what, const std::string& name, int err) {
  const ErrorCode code = os::write_error_code(err);
  return Error(code, os::with_reason("cannot copy '" + name + "' into the fork (" + what + ")", err),
               code == ErrorCode::quota ? "free space on the disk of the sandbox folders (CORRAL_LOCAL_DIR sets "
                                          "where they are)"
                                        : "");
}

// The entry names of the folder open at `dir`, "." and ".." left out.
std::vector<std::string> entries(int dir, const std::string& name) {
  const int own = ::dup(dir);
  if (own < 0) throw copy_error("dup", name, errno);
  struct CloseDir {
    void operator()(DIR* d) const { ::closedir(d); }
  };
  std::unique_ptr<DIR, CloseDir> d(::fdopendir(own));
  if (!d) {
    const int err = errno;
    ::close(own);
    throw copy_error("list", name, err);
  }
  std::vector<std::string> out;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  return out;
}

// Gives the entry `n` of folder `to` (open as `fd`, or -1 for a link) to `owner`.
void give(int to, const std::string& n, int fd, const std::optional<JailUser>& owner, const std::string& name) {
  if (!owner) return;
  const int rc = fd >= 0 ? ::fchown(fd, owner->uid, owner->gid)
                         : ::fchownat(to, n.c_str(), owner->uid, owner->gid, AT_SYMLINK_NOFOLLOW);
  if (rc != 0) throw copy_error("chown", name, errno);
}

void copy_below(int from, int to, const std::string& where, const std::optional<JailUser>& owner) {
  for (const std::string& n : entries(from, where)) {
    const std::string name = where.empty() ? n : where + "/" + n;
    struct stat st {};
    if (::fstatat(from, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw copy_error("stat", name, errno);
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    if (S_ISDIR(st.st_mode)) {
      if (::mkdirat(to, n.c_str(), 0700) != 0) throw copy_error("mkdir", name, errno);
      os::UniqueFd in(::openat(from, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      os::UniqueFd out(::openat(to, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (in.get() < 0 || out.get() < 0) throw copy_error("open folder", name, errno);
      give(to, n, out.get(), owner, name);
      copy_below(in.get(), out.get(), name, owner);
      // Last: the copy into it changed its time, and a read-only folder takes no entries.
      ::fchmod(out.get(), st.st_mode & 07777);
      ::futimens(out.get(), times);
    } else if (S_ISREG(st.st_mode)) {
      os::UniqueFd in(::openat(from, n.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
      if (in.get() < 0) throw copy_error("open", name, errno);
      struct stat opened {};
      if (::fstat(in.get(), &opened) != 0 || !S_ISREG(opened.st_mode)) continue;  // swapped since the stat
      os::UniqueFd out(::openat(to, n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (out.get() < 0) throw copy_error("create", name, errno);
      give(to, n, out.get(), owner, name);
      if (const int err = copy_file_data(in.get(), out.get(), /*same_file_system=*/true)) throw copy_error("copy", name, err);
      ::fchmod(out.get(), st.st_mode & 07777);
      ::futimens(out.get(), times);
    } else if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      const ssize_t len = ::readlinkat(from, n.c_str(), target.data(), target.size());
      if (len < 0) throw copy_error("readlink", name, errno);
      target.resize(static_cast<size_t>(len));
      if (::symlinkat(target.c_str(), to, n.c_str()) != 0) throw copy_error("symlink", name, errno);
      give(to, n, -1, owner, name);
      ::utimensat(to, n.c_str(), times, AT_SYMLINK_NOFOLLOW);
    }
  }
}

}  // namespace

void copy_tree(int from, int to, const std::optional<JailUser>& owner) { copy_below(from, to, "", owner); }

}  // namespace corral::local
