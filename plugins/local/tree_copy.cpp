#include "tree_copy.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "corral/errors.hpp"
#include "corral/sdk/fd_write.hpp"

namespace corral::local {
namespace {

// A descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

Error copy_error(const std::string& what, const std::string& name, int err) {
  const ErrorCode code = sdk::write_error_code(err);
  return Error(code, sdk::with_reason("cannot copy '" + name + "' into the fork (" + what + ")", err),
               code == ErrorCode::quota ? "free space on the disk of the sandbox folders (CORRAL_LOCAL_DIR sets "
                                          "where they are)"
                                        : "");
}

// The bytes of `in` into `out`: a reflink where the file system shares blocks, else
// copy_file_range (which the kernel may still do without reading), else read and write.
void copy_data(int in, int out, const std::string& name) {
  if (::ioctl(out, FICLONE, in) == 0) return;
  while (true) {
    const ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, 1 << 30, 0);
    if (n == 0) return;
    if (n > 0) continue;
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
      throw copy_error("copy", name, errno);
    break;
  }
  std::vector<char> buffer(1 << 16);
  while (true) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n == 0) return;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw copy_error("read", name, errno);
    }
    if (!sdk::write_all(out, std::string_view(buffer.data(), static_cast<size_t>(n)))) throw copy_error("write", name, errno);
  }
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

void copy_below(int from, int to, const std::string& where) {
  for (const std::string& n : entries(from, where)) {
    const std::string name = where.empty() ? n : where + "/" + n;
    struct stat st {};
    if (::fstatat(from, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw copy_error("stat", name, errno);
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    if (S_ISDIR(st.st_mode)) {
      if (::mkdirat(to, n.c_str(), 0700) != 0) throw copy_error("mkdir", name, errno);
      Fd in(::openat(from, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      Fd out(::openat(to, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (in.fd < 0 || out.fd < 0) throw copy_error("open folder", name, errno);
      copy_below(in.fd, out.fd, name);
      // Last: the copy into it changed its time, and a read-only folder takes no entries.
      ::fchmod(out.fd, st.st_mode & 07777);
      ::futimens(out.fd, times);
    } else if (S_ISREG(st.st_mode)) {
      Fd in(::openat(from, n.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
      if (in.fd < 0) throw copy_error("open", name, errno);
      struct stat opened {};
      if (::fstat(in.fd, &opened) != 0 || !S_ISREG(opened.st_mode)) continue;  // swapped since the stat
      Fd out(::openat(to, n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (out.fd < 0) throw copy_error("create", name, errno);
      copy_data(in.fd, out.fd, name);
      ::fchmod(out.fd, st.st_mode & 07777);
      ::futimens(out.fd, times);
    } else if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      const ssize_t len = ::readlinkat(from, n.c_str(), target.data(), target.size());
      if (len < 0) throw copy_error("readlink", name, errno);
      target.resize(static_cast<size_t>(len));
      if (::symlinkat(target.c_str(), to, n.c_str()) != 0) throw copy_error("symlink", name, errno);
      ::utimensat(to, n.c_str(), times, AT_SYMLINK_NOFOLLOW);
    }
  }
}

}  // namespace

void copy_tree(int from, int to) { copy_below(from, to, ""); }

}  // namespace corral::local
