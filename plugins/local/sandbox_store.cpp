#include "sandbox_store.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>

#include "corral/json.hpp"
#include "corral/sdk/fd_write.hpp"
#include "corral/sdk/atomic_file.hpp"
#include "corral/sdk/folder_writer.hpp"
#include "corral/sdk/path_parts.hpp"
#include "run_as.hpp"
#include "tree_copy.hpp"

namespace fs = std::filesystem;

namespace corral::local {
namespace {

// Renames folder `from` to `to` unless `to` exists; false with errno set otherwise.
// RENAME_NOREPLACE where the file system has it; NFS and FUSE refuse the flag (EINVAL),
// and a plain rename refuses too when `to` is a sandbox folder, never empty.
bool rename_new_folder(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS) return false;
  if (::rename(from.c_str(), to.c_str()) == 0) return true;
  if (errno == ENOTEMPTY) errno = EEXIST;
  return false;
}

std::string random_id() {
  std::random_device rd;
  static const char digits[] = "0123456789abcdef";
  std::string id = "local-";
  for (int i = 0; i < 10; ++i) id += digits[rd() % 16];
  return id;
}

bool valid_id(const std::string& id) {
  return id.rfind("local-", 0) == 0 && id.find_first_of("/\\.") == std::string::npos;
}

// Makes every folder below `dir` writable so remove_all can delete what the command
// left read-only.
void make_removable(const fs::path& dir) {
  std::error_code ec;
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  }
}

// Empties `dir` (made removable first); for the owner, working below the workspace.
void clear_folder(const fs::path& dir) {
  make_removable(dir);
  for (const auto& e : fs::directory_iterator(dir)) fs::remove_all(e.path());
}

// The error of unpacking `what` failing with `err`: a full tmpfs or disk is the user's to
// fix (quota), not a bug.
Error unpack_error(const std::string& what, int err) {
  const ErrorCode code = sdk::write_error_code(err);
  return Error(code, sdk::with_reason("cannot unpack the workspace (" + what + "): " + std::strerror(err), err),
               code == ErrorCode::quota ? "free space on the disk of the sandbox folders (CORRAL_LOCAL_DIR sets "
                                         "where they are)"
                                       : "");
}

// Writes the regular file `entry` of `in` at `name` below `out`, with its mode and mtime;
// 0 or the errno.
int write_file(archive* in, archive_entry* entry, const std::string& name, sdk::FolderWriter& out) {
  const mode_t mode = archive_entry_perm(entry) & 07777;
  sdk::UniqueFd fd;
  if (int err = out.create_file(name, mode, fd)) return err;
  const void* block;
  size_t size;
  la_int64_t offset;
  int rc;
  while ((rc = archive_read_data_block(in, &block, &size, &offset)) == ARCHIVE_OK)
    for (size_t done = 0; done < size;) {
      const ssize_t n = ::pwrite(fd.get(), static_cast<const char*>(block) + done, size - done,
                                 static_cast<off_t>(offset + static_cast<la_int64_t>(done)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return n < 0 ? errno : EIO;
      done += static_cast<size_t>(n);
    }
  if (rc < ARCHIVE_WARN) return archive_errno(in) ? archive_errno(in) : EIO;
  // Exactly the archive's mode, whatever the umask took from it.
  if (::fchmod(fd.get(), mode) != 0) return errno;
  const timespec times[2] = {{0, UTIME_NOW},
                             {archive_entry_mtime(entry), archive_entry_mtime_is_set(entry)
                                                              ? archive_entry_mtime_nsec(entry)
                                                              : UTIME_OMIT}};
  return ::futimens(fd.get(), times) == 0 ? 0 : errno;
}

// Throws invalid-argument unless `name` (an archive entry's, or the file a hard link
// entry names) stays below the folder unpacked into: relative, no ".." part.
void check_entry_name(const std::string& name) {
  if (name.empty() || name[0] == '/')
    throw Error(ErrorCode::invalid_argument, "workspace archive entry '" + name + "' is an absolute path");
  const std::vector<std::string_view> parts = sdk::path_parts(name);
  if (parts.empty() || std::find(parts.begin(), parts.end(), "..") != parts.end())
    throw Error(ErrorCode::invalid_argument, "workspace archive entry '" + name + "' leaves the workspace");
}

// Unpacks the .tar.gz open at `archive_fd` into the current folder, never through a
// link: every folder on the way is opened without following one (sdk::FolderWriter), so
// a link the archive holds, or one a kept sandbox's command planted, is never written
// through.
void extract(int archive_fd) {
  std::unique_ptr<archive, decltype(&archive_read_free)> in(archive_read_new(), archive_read_free);
  archive_read_support_format_tar(in.get());
  archive_read_support_filter_gzip(in.get());
  auto read_error = [&] {
    return Error(ErrorCode::internal,
                 std::string("cannot unpack the workspace (read): ") +
                     (archive_error_string(in.get()) ? archive_error_string(in.get()) : "unknown error"));
  };
  if (archive_read_open_fd(in.get(), archive_fd, 1 << 16) != ARCHIVE_OK) throw read_error();
  const sdk::UniqueFd root(::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) throw unpack_error("open the workspace", errno);
  sdk::FolderWriter out(root.get(), 0755);  // folders the archive implies, as tar makes them
  archive_entry* entry = nullptr;
  while (true) {
    int rc = archive_read_next_header(in.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) throw read_error();
    const std::string name = archive_entry_pathname(entry);
    check_entry_name(name);
    int err = 0;
    const char* hardlink = archive_entry_hardlink(entry);
    if (hardlink) {
      check_entry_name(hardlink);
      err = out.hard_link(name, hardlink);
    } else {
      switch (archive_entry_filetype(entry)) {
        case AE_IFDIR: err = out.make_folder(name, archive_entry_perm(entry) & 07777); break;
        case AE_IFLNK: err = out.symlink(name, archive_entry_symlink(entry) ? archive_entry_symlink(entry) : ""); break;
        case AE_IFREG: err = write_file(in.get(), entry, name, out); break;
        default:
          throw Error(ErrorCode::invalid_argument,
                      "workspace archive entry '" + name + "' is neither a file, a folder nor a link");
      }
    }
    if (err) {
      out.remove(name);  // no half-written file stays
      throw unpack_error(name, err);
    }
  }
}

// Opens the workspace archive (as the caller: it may be readable only by it, not by the
// owner) for `work`, closing it however `work` ends.
void with_archive(const fs::path& archive_path, const std::function<void(int)>& work) {
  int fd = ::open(archive_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(ErrorCode::internal, "cannot open the workspace archive " + archive_path.string() + ": " + std::strerror(errno));
  try {
    work(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

}  // namespace

fs::path SandboxStore::dir_of(const std::string& id) const {
  if (!valid_id(id))
    throw Error(ErrorCode::not_found, "'" + id + "' is not a local sandbox id");
  return root_ / id;
}

LocalSandbox SandboxStore::create(const std::string& slug, const StringMap& labels, bool no_network,
                                  bool in_memory) const {
  fs::create_directories(root_);
  LocalSandbox s;
  s.slug = slug;
  s.labels = labels;
  s.no_network = no_network;
  s.in_memory = in_memory;
  s.created_at = now_rfc3339();
  // Made under a staging name and renamed into place whole: a create killed half-way
  // leaves a staging folder (all() sweeps it), never a sandbox folder without the
  // metadata that lets `stop --orphans` attribute and remove it. The staging folder is
  // locked while it is built, so a listing in another process, PID namespace or container
  // sharing this folder never removes one still being made.
  const fs::path staging = root_ / (std::string(staging_prefix) + random_id());
  if (::mkdir(staging.c_str(), 0700) != 0)
    throw Error(ErrorCode::internal, "cannot create a sandbox folder in " + root_.string() + ": " + std::strerror(errno));
  // Closing it unlocks the folder.
  const sdk::UniqueFd lock(::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  const int held = lock.get();
  try {
    if (held < 0 || ::flock(held, LOCK_EX) != 0)
      throw Error(ErrorCode::internal, "cannot lock " + staging.string() + ": " + std::strerror(errno));
    // An in-memory sandbox's workspace is its tmpfs: the folder holds only its record.
    if (!in_memory) {
      fs::create_directory(staging / "workspace");
      // The jail's identity owns its workspace, and nothing else of the sandbox folder.
      if (owner_ && ::fchownat(held, "workspace", owner_->uid, owner_->gid, AT_SYMLINK_NOFOLLOW) != 0)
        throw Error(ErrorCode::internal, "cannot hand " + (staging / "workspace").string() + " to uid " +
                                             std::to_string(owner_->uid) + ": " + std::strerror(errno));
    }
    for (int attempt = 0;; ++attempt) {
      s.id = random_id();
      // Checked: a sandbox whose "no network" went unrecorded would get one on its next command.
      write_metadata(s, staging);
      if (rename_new_folder(staging, dir_of(s.id))) break;
      if (errno != EEXIST || attempt > 8)
        throw Error(ErrorCode::internal, "cannot create a sandbox folder in " + root_.string() + ": " +
                                             std::strerror(errno));
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(staging, ec);
    throw;
  }
  return s;
}

void SandboxStore::write_metadata(const LocalSandbox& s) const { write_metadata(s, dir_of(s.id)); }

void SandboxStore::write_metadata(const LocalSandbox& s, const fs::path& dir) const {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "id", s.id);
  json::write_string(w, "slug", s.slug);
  json::write_string(w, "createdAt", s.created_at);
  json::write_map(w, "labels", s.labels);
  if (s.no_network) json::write_string(w, "network", "none");
  if (s.in_memory) json::write_string(w, "workspace", "memory");
  if (s.paused) {
    w.Key("paused");
    w.Bool(true);
  }
  w.EndObject();
  sdk::write_file_atomically(dir / "sandbox.json", std::string(buffer.GetString()) + "\n", 0600,
                             "the metadata of sandbox " + s.id, sdk::Durability::process_crash);
}

void SandboxStore::set_paused(LocalSandbox& sandbox, bool paused) const {
  sandbox.paused = paused;
  write_metadata(sandbox);
}

LocalSandbox SandboxStore::fork(const LocalSandbox& source, const std::string& slug, const StringMap& labels) const {
  require_workspace(source.id);
  // Opened as the caller: the sandbox folders are only the caller's to enter.
  auto open_folder = [](const fs::path& p) {
    const int fd = ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) throw Error(ErrorCode::internal, sdk::with_reason("cannot open " + p.string(), errno));
    return fd;
  };
  LocalSandbox copy = create(slug, labels, source.no_network);
  int from = -1, to = -1;
  try {
    from = open_folder(workspace_of(source.id));
    to = open_folder(workspace_of(copy.id));
    // As the jail's identity, which owns both trees: the copies are its, and nothing the
    // command planted can steer root.
    if (owner_) run_as(*owner_, workspace_of(copy.id), [&] { copy_tree(from, to); });
    else copy_tree(from, to);
  } catch (...) {
    if (from >= 0) ::close(from);
    if (to >= 0) ::close(to);
    try {
      remove(copy.id);
    } catch (const Error&) {
      // The copy's own error says more; the half copy carries the fork's labels for `stop --orphans`.
    }
    throw;
  }
  ::close(from);
  ::close(to);
  return copy;
}

std::optional<LocalSandbox> SandboxStore::find(const std::string& id) const {
  if (!valid_id(id)) return std::nullopt;
  std::ifstream in(dir_of(id) / "sandbox.json");
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    json::Document doc = json::parse(ss.str(), "sandbox metadata");
    LocalSandbox s;
    s.id = json::get_string(doc, "id");
    s.slug = json::get_string(doc, "slug");
    s.created_at = json::get_string(doc, "createdAt");
    s.labels = json::get_map(doc, "labels");
    // Anything but absent means no network: an unreadable value must never open it.
    s.no_network = doc.HasMember("network");
    s.paused = json::get_bool(doc, "paused");
    s.in_memory = doc.HasMember("workspace");
    return s;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::vector<LocalSandbox> SandboxStore::all() const {
  std::vector<LocalSandbox> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(staging_prefix)) {
      remove_if_maker_gone(e.path());
      continue;
    }
    if (auto s = find(name)) out.push_back(std::move(*s));
  }
  return out;
}

void SandboxStore::remove_if_maker_gone(const fs::path& staging) const {
  // Its maker holds its lock until the rename; a minute's grace covers the moment between
  // its mkdir and its lock. Nothing was ever run in it: it holds only an empty workspace
  // and perhaps the metadata, removable as corral's user.
  const int fd = ::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st {};
  const bool abandoned = ::fstat(fd, &st) == 0 && std::time(nullptr) - st.st_mtime > 60 &&
                         ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (abandoned) {
    std::error_code ec;
    fs::remove_all(staging, ec);
  }
  ::close(fd);
}

void SandboxStore::remove(const std::string& id) const {
  fs::path dir = dir_of(id);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  // What the jail made is emptied as the jail's identity, so a symlink it planted (or
  // swaps in meanwhile) never steers root; a workspace from before owners falls to root.
  if (owner_ && workspace_owned(id)) run_as(*owner_, workspace_of(id), [] { clear_folder("."); });
  make_removable(dir);
  fs::remove_all(dir, ec);
  if (ec) throw Error(ErrorCode::internal, "cannot remove " + dir.string() + ": " + ec.message());
}

void SandboxStore::unpack(const std::string& id, const fs::path& archive_path) const {
  // Unpacked over what is there: files the sandbox made (build output, caches) survive
  // a re-sync of a reused sandbox, which is what makes reuse fast.
  fs::path ws = workspace_of(id);
  if (!owner_) fs::create_directories(ws);
  require_workspace(id);
  with_archive(archive_path, [&](int fd) { run_as(owner_, ws, [fd] { extract(fd); }); });
}

void SandboxStore::unpack_into(const fs::path& workspace, const fs::path& archive_path) const {
  // Entered by a thread of its own: the path is a /proc/self link no prefix could spell.
  with_archive(archive_path, [&](int fd) { run_as(owner_, workspace, [fd] { extract(fd); }); });
}

bool SandboxStore::workspace_owned(const std::string& id) const {
  struct stat st {};
  if (::lstat(workspace_of(id).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return !owner_ || (st.st_uid == owner_->uid && st.st_gid == owner_->gid);
}

void SandboxStore::require_workspace(const std::string& id) const {
  if (workspace_owned(id)) return;
  throw Error(ErrorCode::unavailable,
              "local sandbox " + id + "'s workspace is missing or not owned by the jail's user (uid " +
                  std::to_string(owner_ ? owner_->uid : ::getuid()) + "); it was probably made by an older corral",
              "remove it with `corral stop --id " + id + "` and run again");
}

}  // namespace corral::local
