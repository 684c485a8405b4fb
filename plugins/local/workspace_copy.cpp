#include "workspace_copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "corral/os/fd_write.hpp"
#include "corral/os/folder_writer.hpp"
#include "corral/os/path_parts.hpp"
#include "file_data.hpp"
#include "run_as.hpp"

namespace fs = std::filesystem;

namespace corral::local {
namespace {

// Files opened as the caller before the copy thread switches to write them as the owner:
// each switch costs a few system calls, a batch one pair; each open file one descriptor.
constexpr size_t kBatch = 64;

// How many threads copy `files` files: a second one once there is more than a batch
// and a second core to run it (two threads keep a small machine's disk busy; more only
// contend for the same folders).
unsigned copy_threads(size_t files) {
  return files > kBatch && std::thread::hardware_concurrency() > 1 ? 2 : 1;
}

// A listed file, opened (or, for a link, read) as the caller.
struct Source {
  const TreeFile* file = nullptr;
  os::UniqueFd fd;          // a regular file's, open for reading
  std::uint64_t size = 0;    // its size when opened: a file that grows is cut there
  timespec mtime{};
  std::string link_target;   // a link's
};

// Throws invalid-argument unless `path` stays below the tree: relative, no ".." part.
void check_listed_path(const std::string& path) {
  const std::vector<std::string_view> parts = os::path_parts(path);
  if (path[0] == '/' || parts.empty() || std::find(parts.begin(), parts.end(), "..") != parts.end())
    throw Error(ErrorCode::invalid_argument, "the workspace upload lists '" + path + "', which leaves the workspace");
}

// Why `file` of the tree could not be read, failing with `err`.
Error read_error(const fs::path& file, int err) {
  const std::string message = "cannot read " + file.string() + ": " + std::strerror(err);
  if (err == EACCES || err == EPERM)
    return Error(ErrorCode::invalid_argument, message,
                 "make it readable (chmod u+r '" + file.filename().string() +
                     "'), or list it in .corralignore to leave it out");
  if (err == ENOENT)
    return Error(ErrorCode::invalid_argument, file.string() + " went while corral copied the workspace",
                 "run again once the working tree stays put");
  return Error(ErrorCode::internal, message);
}

// `file` of the tree is no longer what the scan listed (a regular file or a link).
Error changed_kind(const fs::path& file) {
  return Error(ErrorCode::invalid_argument,
               file.string() + " changed while corral copied the workspace: it is no longer the file or link listed",
               "run again once the working tree stays put");
}

// Why the folders on the way to `file` could not be opened, failing with `err`.
Error way_error(const fs::path& file, int err) {
  if (err != ELOOP && err != ENOTDIR) return read_error(file, err);
  // git still lists the files of a folder replaced by a link until the change is staged.
  return Error(ErrorCode::invalid_argument,
               "cannot copy " + file.string() + ": a folder on its way is a link or a file, and corral copies no "
               "file through a link",
               "stage the change (`git add -A`), or list the path in .corralignore");
}

// Why `name` could not be written into the workspace, failing with `err`: a full disk or
// tmpfs is the user's to fix (quota).
Error write_error(const std::string& name, int err) {
  const ErrorCode code = os::write_error_code(err);
  return Error(code, os::with_reason("cannot copy '" + name + "' into the workspace", err),
               code == ErrorCode::quota ? "free space on the disk of the sandbox folders (CORRAL_LOCAL_DIR sets "
                                          "where they are)"
                                        : "");
}

// Opens `file` below the tree open in `tree` (at `root`), as whoever calls.
Source open_source(os::OpenFolders& tree, const fs::path& root, const TreeFile& file) {
  Source s;
  s.file = &file;
  std::string last;
  const int parent = tree.parent_of(file.path, last);
  if (parent < 0) throw way_error(root / file.path, errno);
  struct stat st {};
  if (file.symlink) {
    if (::fstatat(parent, last.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw read_error(root / file.path, errno);
    if (!S_ISLNK(st.st_mode)) throw changed_kind(root / file.path);
    s.link_target.resize(static_cast<size_t>(st.st_size) + 1);
    const ssize_t n = ::readlinkat(parent, last.c_str(), s.link_target.data(), s.link_target.size());
    if (n < 0) throw read_error(root / file.path, errno);
    if (static_cast<size_t>(n) >= s.link_target.size()) throw changed_kind(root / file.path);  // grew meanwhile
    s.link_target.resize(static_cast<size_t>(n));
    return s;
  }
  // O_NONBLOCK: a FIFO swapped in since the scan must not hold the copy up.
  s.fd = os::UniqueFd(::openat(parent, last.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (s.fd.get() < 0) throw errno == ELOOP ? changed_kind(root / file.path) : read_error(root / file.path, errno);
  if (::fstat(s.fd.get(), &st) != 0) throw read_error(root / file.path, errno);
  if (!S_ISREG(st.st_mode)) throw changed_kind(root / file.path);
  s.size = static_cast<std::uint64_t>(st.st_size);
  s.mtime = st.st_mtim;
  return s;
}

// Writes `s` at its path below `out`, as whoever calls, with a umask of 0; nothing
// half-written stays. `same_file_system`: the tree's and the workspace's. A big file's
// copy stops with cancelled once `host` is.
void write_source(os::FolderWriter& out, const Source& s, bool same_file_system, const sdk::Host& host,
                  const std::optional<timespec>& copied_at) {
  const std::string& name = s.file->path;
  if (s.file->symlink) {
    if (copied_at && out.holds_link(name, s.link_target)) return;
    if (const int err = out.symlink(name, s.link_target)) throw write_error(name, err);
    return;
  }
  const mode_t mode = s.file->executable ? 0755 : 0644;
  // A reused sandbox's copy already the same (a sync after a command ran there, which
  // sends the whole tree): only the files the command changed or removed are copied.
  if (copied_at && out.holds_file(name, mode, s.size, s.mtime, *copied_at)) return;
  os::UniqueFd fd;
  int err = out.create_file(name, mode, fd);
  if (!err) err = copy_file_data(s.fd.get(), fd.get(), same_file_system, s.size, [&] { return host.cancelled(); });
  // The tree's time, so a build in the sandbox sees its outputs as up to date.
  const timespec times[2] = {{0, UTIME_OMIT}, s.mtime};
  if (!err && ::futimens(fd.get(), times) != 0) err = errno;
  if (!err) return;
  out.remove(name);
  if (err == ECANCELED) throw Error(ErrorCode::cancelled, "interrupted while copying the workspace");
  throw write_error(name, err);
}

}  // namespace

timespec file_clock_now() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return now;
}

void copy_workspace(const UploadRequest& request, const fs::path& workspace, const std::optional<JailUser>& owner,
                    const sdk::Host& host, const std::optional<timespec>& copied_at) {
  for (const TreeFile& f : request.tree_files) check_listed_path(f.path);
  const fs::path root = request.tree_root;
  const os::UniqueFd tree_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (tree_fd.get() < 0) throw read_error(root, errno);
  const std::vector<TreeFile>& files = request.tree_files;
  const unsigned threads = copy_threads(files.size());
  // Batches go to whichever copy thread asks next; one that fails stops the others. A
  // tree of under two full batches is split evenly (100 files: 50 and 50, not 64 and 36).
  const size_t batch_size = std::min(kBatch, (files.size() + threads - 1) / threads);
  std::atomic<size_t> next_batch{0};
  std::atomic<bool> stop{false};
  // Reported in order: two threads finishing batches at once must not report less after more.
  std::mutex report_mutex;
  std::uint64_t copied = 0;
  const auto copy_batches = [&](FileAccess& access) {
    const os::UniqueFd into(::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (into.get() < 0) throw write_error(".", errno);
    struct stat tree_st {}, into_st {};
    const bool same_file_system = ::fstat(tree_fd.get(), &tree_st) == 0 && ::fstat(into.get(), &into_st) == 0 &&
                                  tree_st.st_dev == into_st.st_dev;
    // Folders the paths imply, as tar makes them; what the sandbox's commands put in the way
    // of the tree (a synced folder swapped for a link, a file for a folder) gives way to it.
    os::FolderWriter out(into.get(), 0755, os::Obstacles::replace);
    os::OpenFolders tree(tree_fd.get(), /*create=*/false);
    std::vector<Source> batch;
    try {
      for (size_t first; !stop && (first = next_batch.fetch_add(batch_size)) < files.size();) {
        if (host.cancelled()) throw Error(ErrorCode::cancelled, "interrupted while copying the workspace");
        batch.clear();
        access.as_caller();
        for (size_t i = first; i < std::min(files.size(), first + batch_size); ++i)
          batch.push_back(open_source(tree, root, files[i]));
        access.as_user();
        std::uint64_t bytes = 0;
        for (const Source& s : batch) {
          write_source(out, s, same_file_system, host, copied_at);
          bytes += s.size;
        }
        std::lock_guard lock(report_mutex);
        host.transfer(copied += bytes, request.size);
      }
    } catch (...) {
      stop = true;
      throw;
    }
  };
  run_copying_as(owner, workspace, copy_batches, threads);
}

}  // namespace corral::local
