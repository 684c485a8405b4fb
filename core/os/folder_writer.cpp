#include "corral/os/folder_writer.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "corral/os/path_parts.hpp"

namespace corral::os {

UniqueFd open_folder_nofollow(int parent, const std::string& part, bool create, mode_t mode) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(parent, part.c_str(), kFlags);
  if (fd < 0 && errno == ENOENT && create) {
    if (::mkdirat(parent, part.c_str(), mode) != 0 && errno != EEXIST) return UniqueFd();
    fd = ::openat(parent, part.c_str(), kFlags);
  }
  return UniqueFd(fd);
}

int remove_tree_at(int parent, const std::string& name) {
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : errno;
  if (!S_ISDIR(st.st_mode)) return ::unlinkat(parent, name.c_str(), 0) == 0 || errno == ENOENT ? 0 : errno;
  UniqueFd dir(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return errno;
  // A folder made read-only still gives up its entries.
  ::fchmod(dir.get(), 0700);
  const int listing = ::dup(dir.get());
  if (listing < 0) return errno;
  DIR* d = ::fdopendir(listing);
  if (!d) {
    const int err = errno;
    ::close(listing);
    return err;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  for (const std::string& n : names)
    if (const int err = remove_tree_at(dir.get(), n)) return err;
  return ::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : errno;
}

int OpenFolders::parent_of(const std::string& name, std::string& last) {
  std::vector<std::string_view> parts = path_parts(name);
  if (parts.empty()) {
    errno = EINVAL;
    return -1;
  }
  last = parts.back();
  parts.pop_back();
  std::size_t keep = 0;
  while (keep < parts.size() && keep < open_parts_.size() && parts[keep] == open_parts_[keep]) ++keep;
  open_parts_.resize(keep);
  open_fds_.resize(keep);
  for (std::size_t i = keep; i < parts.size(); ++i) {
    const int at = open_fds_.empty() ? root_ : open_fds_.back().get();
    UniqueFd next = open_folder_nofollow(at, std::string(parts[i]), create_, folder_mode_);
    if (next.get() < 0 && create_ && obstacles_ == Obstacles::replace && (errno == ELOOP || errno == ENOTDIR)) {
      // A link or a file where the tree has a folder: removed (never followed), and the folder made.
      if (::unlinkat(at, std::string(parts[i]).c_str(), 0) != 0) return -1;
      next = open_folder_nofollow(at, std::string(parts[i]), true, folder_mode_);
    }
    if (next.get() < 0) return -1;
    open_parts_.emplace_back(parts[i]);
    open_fds_.push_back(std::move(next));
  }
  return open_fds_.empty() ? root_ : open_fds_.back().get();
}

int FolderWriter::clear(int parent, const std::string& last) const {
  struct stat st {};
  if (::fstatat(parent, last.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : errno;
  if (S_ISDIR(st.st_mode)) return obstacles_ == Obstacles::replace ? remove_tree_at(parent, last) : EISDIR;
  return ::unlinkat(parent, last.c_str(), 0) == 0 || errno == ENOENT ? 0 : errno;
}

int FolderWriter::make_folder(const std::string& name, mode_t mode) {
  std::string last;
  int parent = parent_of(name, last);
  if (parent < 0) return errno;
  if (::mkdirat(parent, last.c_str(), mode) == 0) return 0;
  if (errno != EEXIST) return errno;
  struct stat st {};
  if (::fstatat(parent, last.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return 0;
  if (int err = clear(parent, last)) return err;
  return ::mkdirat(parent, last.c_str(), mode) == 0 ? 0 : errno;
}

int FolderWriter::create_file(const std::string& name, mode_t mode, UniqueFd& fd) {
  std::string last;
  int parent = parent_of(name, last);
  if (parent < 0) return errno;
  constexpr int kCreate = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  // Made where nothing is first (a fresh folder: one system call); O_EXCL refuses
  // anything there, a link included, which is then cleared (never followed).
  fd = UniqueFd(::openat(parent, last.c_str(), kCreate, mode));
  if (fd.get() >= 0) return 0;
  if (errno != EEXIST) return errno;
  if (int err = clear(parent, last)) return err;
  fd = UniqueFd(::openat(parent, last.c_str(), kCreate, mode));
  return fd.get() < 0 ? errno : 0;
}

int FolderWriter::hard_link(const std::string& name, const std::string& target) {
  std::string target_last;
  int target_parent = parent_of(target, target_last);
  if (target_parent < 0) return errno;
  // Held open: finding the new name's folder may close the cached one.
  UniqueFd held(::fcntl(target_parent, F_DUPFD_CLOEXEC, 0));
  if (held.get() < 0) return errno;
  struct stat st {};
  if (::fstatat(held.get(), target_last.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno;
  if (!S_ISREG(st.st_mode)) return EPERM;
  std::string last;
  int parent = parent_of(name, last);
  if (parent < 0) return errno;
  if (int err = clear(parent, last)) return err;
  // No AT_SYMLINK_FOLLOW: a link swapped in meanwhile is never followed.
  return ::linkat(held.get(), target_last.c_str(), parent, last.c_str(), 0) == 0 ? 0 : errno;
}

int FolderWriter::symlink(const std::string& name, const std::string& target) {
  std::string last;
  int parent = parent_of(name, last);
  if (parent < 0) return errno;
  if (int err = clear(parent, last)) return err;
  return ::symlinkat(target.c_str(), parent, last.c_str()) == 0 ? 0 : errno;
}

bool FolderWriter::holds_file(const std::string& name, mode_t mode, std::uint64_t size, const timespec& mtime,
                              const timespec& changed_before) {
  std::string last;
  const int parent = parent_of(name, last);
  struct stat st {};
  return parent >= 0 && ::fstatat(parent, last.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
         (st.st_mode & 07777) == mode && static_cast<std::uint64_t>(st.st_size) == size &&
         st.st_mtim.tv_sec == mtime.tv_sec && st.st_mtim.tv_nsec == mtime.tv_nsec &&
         (st.st_ctim.tv_sec < changed_before.tv_sec ||
          (st.st_ctim.tv_sec == changed_before.tv_sec && st.st_ctim.tv_nsec < changed_before.tv_nsec));
}

bool FolderWriter::holds_link(const std::string& name, const std::string& target) {
  std::string last;
  const int parent = parent_of(name, last);
  if (parent < 0) return false;
  std::string held(target.size() + 1, '\0');  // one more: a longer target does not fit exactly
  const ssize_t n = ::readlinkat(parent, last.c_str(), held.data(), held.size());
  return n >= 0 && static_cast<size_t>(n) == target.size() && held.compare(0, target.size(), target) == 0;
}

void FolderWriter::remove(const std::string& name) {
  std::string last;
  int parent = parent_of(name, last);
  if (parent >= 0) ::unlinkat(parent, last.c_str(), 0);
}

}  // namespace corral::os
