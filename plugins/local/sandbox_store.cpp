#include "sandbox_store.hpp"

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
#include <memory>
#include <sstream>

#include "corral/json.hpp"
#include "corral/os/fd_write.hpp"
#include "corral/os/atomic_file.hpp"
#include "corral/os/file_lock.hpp"
#include "corral/os/folder_writer.hpp"
#include "corral/os/random.hpp"
#include "corral/model_shapes.hpp"
#include "corral/shape.hpp"
#include "run_as.hpp"
#include "tree_copy.hpp"

namespace fs = std::filesystem;

namespace corral::shape {

using local::LocalSandbox;

// True when `object` has `key` at all, null included.
inline bool has_member(const json::Value& object, const char* key) {
  return object.IsObject() && object.HasMember(key);
}

// "network": "none", or "allow:..." for one that reaches listed hosts through the egress
// proxy. Anything but absent reads as a network of its own, and anything but a valid allow
// list as none: an unreadable value must never open it.
struct NoNetwork {
  static void write(json::Writer& w, const LocalSandbox& s) {
    if (!s.no_network) return;
    json::write_string(w, "network",
                       s.egress.empty() ? "none" : to_string(NetworkPolicy{NetworkPolicy::Mode::allow, s.egress}));
  }
  static void read(const json::Value& object, LocalSandbox& s, std::string_view) {
    s.no_network = has_member(object, "network");
    const json::Value* v = json::find(object, "network");
    if (!v || !v->IsString()) return;
    try {
      const NetworkPolicy policy = parse_network_policy({v->GetString(), v->GetStringLength()});
      if (policy.mode == NetworkPolicy::Mode::allow) s.egress = policy.allow;
    } catch (const Error&) {
      // none
    }
  }
};

// "workspace": "memory" for a workspace held in a tmpfs by the process that made it.
struct InMemory {
  static void write(json::Writer& w, const LocalSandbox& s) {
    if (s.in_memory) json::write_string(w, "workspace", "memory");
  }
  static void read(const json::Value& object, LocalSandbox& s, std::string_view) {
    s.in_memory = has_member(object, "workspace");
  }
};

// "uid": the jails' user. Only a uid of corral's range: a record must never make a jail
// run as anyone else.
struct JailUid {
  static void write(json::Writer& w, const LocalSandbox& s) {
    if (!s.user) return;
    w.Key("uid");
    w.Uint(s.user->uid);
  }
  static void read(const json::Value& object, LocalSandbox& s, std::string_view what) {
    if (!has_member(object, "uid")) return;
    const json::Value& uid = object["uid"];
    if (!uid.IsUint() || !local::is_jail_id(uid.GetUint()))
      throw Error(ErrorCode::invalid_argument, std::string(what) + " names a uid outside corral's range");
    s.user = local::JailUser{uid.GetUint(), uid.GetUint()};
  }
};

template <>
struct Shape<LocalSandbox> {
  static constexpr auto fields =
      std::tuple{field("id", &LocalSandbox::id),
                 field("slug", &LocalSandbox::slug),
                 field("createdAt", &LocalSandbox::created_at),
                 field("labels", &LocalSandbox::labels),
                 custom<LocalSandbox, NoNetwork>(),
                 custom<LocalSandbox, InMemory>(),
                 custom<LocalSandbox, JailUid>(),
                 field("paused", &LocalSandbox::paused, omitted),
                 field("sizeLimit", &LocalSandbox::size_limit, omitted)};
  static void check(const LocalSandbox& s, std::string_view what) {
    if (s.id.empty()) throw Error(ErrorCode::invalid_argument, std::string(what) + " has no id");
  }
};

}  // namespace corral::shape

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

std::string random_id() { return "local-" + os::random_hex(5); }

// True when `st` was last modified less than `age` ago.
bool is_younger(const struct stat& st, std::chrono::seconds age) {
  return ::time(nullptr) - st.st_mtime < static_cast<time_t>(age.count());
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

}  // namespace

fs::path SandboxStore::dir_of(const std::string& id) const {
  if (!valid_id(id))
    throw Error(ErrorCode::not_found, "'" + id + "' is not a local sandbox id");
  return root_ / id;
}

LocalSandbox SandboxStore::create(const std::string& slug, const StringMap& labels, bool no_network,
                                  bool in_memory, const std::vector<std::string>& egress,
                                  std::uint64_t size_limit) const {
  fs::create_directories(root_);
  LocalSandbox s;
  s.size_limit = size_limit;
  s.slug = slug;
  s.labels = labels;
  s.no_network = no_network || !egress.empty();
  s.egress = egress;
  s.in_memory = in_memory;
  s.created_at = now_rfc3339();
  // Made under a staging name and renamed into place whole: a create killed half-way
  // leaves a staging folder (all() sweeps it), never a sandbox folder without the
  // metadata that lets `stop --orphans` attribute and remove it. The staging folder is
  // locked while it is built, so a listing in another process, PID namespace or container
  // sharing this folder never removes one still being made.
  fs::path staging;
  const os::FileLock lock = make_staging_folder(staging);  // released, the folder is unlocked
  const int held = lock.fd();
  try {
    // An in-memory sandbox's workspace is its tmpfs: the folder holds only its record.
    if (!in_memory) {
      fs::create_directory(staging / "workspace");
      // As a /tmp is: its own user's alone in the jail, where nobody else is.
      if (::mkdirat(held, "tmp", 0700) != 0 || ::fchmodat(held, "tmp", 01777, 0) != 0)
        throw Error(ErrorCode::internal, os::with_reason("cannot create " + (staging / "tmp").string(), errno));
    }
    for (int attempt = 0;; ++attempt) {
      s.id = random_id();
      // The user is registered to the folder's final name, and locked until it is there.
      std::optional<JailIdReservation> user;
      if (ids_) {
        user.emplace(ids_->reserve(fs::absolute(dir_of(s.id))));
        s.user = user->user();
      }
      // The jail's identity owns its workspace and /tmp, and nothing else of the sandbox folder.
      for (const char* folder : {"workspace", "tmp"})
        if (s.user && !in_memory && ::fchownat(held, folder, s.user->uid, s.user->gid, AT_SYMLINK_NOFOLLOW) != 0)
          throw Error(ErrorCode::internal, os::with_reason("cannot hand " + (staging / folder).string() +
                                                                " to uid " + std::to_string(s.user->uid),
                                                            errno));
      // Checked: a sandbox whose "no network" went unrecorded would get one on its next command.
      write_metadata(s, staging);
      if (rename_new_folder(staging, dir_of(s.id))) {
        if (user) user->commit();
        break;
      }
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
  os::write_file_atomically(dir / "sandbox.json", shape::to_json(s) + "\n", 0600, "the metadata of sandbox " + s.id,
                             os::Durability::process_crash);
}

namespace {

// The record of type T in the JSON file at `path`; nullopt when the file is missing or
// does not read as one (a damaged record finds nothing, and nothing is guessed).
template <typename T>
std::optional<T> read_record(const fs::path& path, const char* what) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    return shape::from_json<T>(text.str(), what);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// `more` counted into `into`: the same destination (and reason) adds up; a new one past
// `cap` joins the "(others)" entry.
void merge_destinations(std::vector<EgressDestination>& into, const std::vector<EgressDestination>& more,
                        size_t cap) {
  for (const EgressDestination& d : more) {
    auto same = [](const EgressDestination& a, const EgressDestination& b) {
      return a.host == b.host && a.port == b.port && a.reason == b.reason;
    };
    auto found = std::find_if(into.begin(), into.end(), [&](const EgressDestination& e) { return same(e, d); });
    if (found == into.end() && into.size() >= cap) {
      const EgressDestination others{"(others)", 0, 0, d.reason.empty() ? "" : "several reasons"};
      found = std::find_if(into.begin(), into.end(), [&](const EgressDestination& e) { return same(e, others); });
      if (found == into.end()) found = into.insert(into.end(), others);
    }
    if (found == into.end()) found = into.insert(into.end(), EgressDestination{d.host, d.port, 0, d.reason});
    found->count += d.count;
  }
}

}  // namespace

void SandboxStore::add_egress(const std::string& id, const EgressReport& report) const {
  if (report.allowed.empty() && report.refused.empty()) return;
  const fs::path file = dir_of(id) / "egress.json";
  const os::FileLock lock = os::FileLock::acquire(dir_of(id) / "egress.lock", "the egress report of sandbox " + id);
  EgressReport total = egress_of(id).value_or(EgressReport{});
  merge_destinations(total.allowed, report.allowed, kMaxEgressListed);
  merge_destinations(total.refused, report.refused, kMaxEgressListed);
  os::write_file_atomically(file, shape::to_json(total) + "\n", 0600, "the egress report of sandbox " + id,
                             os::Durability::process_crash);
}

std::optional<EgressReport> SandboxStore::egress_of(const std::string& id) const {
  if (!valid_id(id)) return std::nullopt;
  return read_record<EgressReport>(dir_of(id) / "egress.json", "egress report");
}

std::optional<timespec> SandboxStore::copied_at(const std::string& id) const {
  if (!valid_id(id)) return std::nullopt;
  std::ifstream in(dir_of(id) / "copied-at");
  long long seconds = -1, nanoseconds = -1;
  if (!(in >> seconds >> nanoseconds) || seconds < 0 || nanoseconds < 0 || nanoseconds >= 1'000'000'000)
    return std::nullopt;
  return timespec{static_cast<time_t>(seconds), static_cast<long>(nanoseconds)};
}

void SandboxStore::set_copied_at(const std::string& id, const timespec& when) const {
  os::write_file_atomically(dir_of(id) / "copied-at",
                             std::to_string(when.tv_sec) + " " + std::to_string(when.tv_nsec) + "\n", 0600,
                             "the time of sandbox " + id + "'s last sync", os::Durability::process_crash);
}

void SandboxStore::set_paused(LocalSandbox& sandbox, bool paused) const {
  sandbox.paused = paused;
  write_metadata(sandbox);
}

LocalSandbox SandboxStore::fork(const LocalSandbox& source, const std::string& slug, const StringMap& labels) const {
  require_workspace(source);
  // Opened as the caller: the sandbox folders are only the caller's to enter.
  auto open_folder = [](const fs::path& p) {
    os::UniqueFd fd(::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0) throw Error(ErrorCode::internal, os::with_reason("cannot open " + p.string(), errno));
    return fd;
  };
  LocalSandbox copy = create(slug, labels, source.no_network, /*in_memory=*/false, source.egress, source.size_limit);
  try {
    // The copy belongs to the fork's own user. Read and written without following a link
    // anywhere, so nothing the source's command planted can steer the caller.
    copy_tree(open_folder(workspace_of(source.id)).get(), open_folder(workspace_of(copy.id)).get(), copy.user);
    if (!kept_tmp(source).empty())
      copy_tree(open_folder(tmp_of(source.id)).get(), open_folder(tmp_of(copy.id)).get(), copy.user);
  } catch (...) {
    try {
      remove(copy.id);
    } catch (const Error&) {
      // The copy's own error says more; the half copy carries the fork's labels for `stop --orphans`.
    }
    throw;
  }
  return copy;
}

std::optional<LocalSandbox> SandboxStore::find(const std::string& id) const {
  if (!valid_id(id)) return std::nullopt;
  return read_record<LocalSandbox>(dir_of(id) / "sandbox.json", "sandbox metadata");
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
    if (name.starts_with(making_prefix)) {
      remove_if_maker_gone(e.path(), abandoned_making_age);
      continue;
    }
    if (auto s = find(name)) out.push_back(std::move(*s));
  }
  return out;
}

os::FileLock SandboxStore::make_staging_folder(fs::path& staging) const {
  for (int attempt = 0;; ++attempt) {
    // Made under a name listings leave alone while it is young, locked, then renamed to
    // the staging name listings sweep once they can lock it: a listing never finds a
    // staging folder its maker has not locked yet.
    const std::string tag = random_id();
    const fs::path making = root_ / (std::string(making_prefix) + tag);
    if (::mkdir(making.c_str(), 0700) != 0) {
      if (errno == EEXIST && attempt < 8) continue;
      throw Error(ErrorCode::internal,
                  os::with_reason("cannot create a sandbox folder in " + root_.string(), errno));
    }
    // Nobody else has a use for it but a listing sweeping one it found old (on a clock
    // set back, say), which holds it for a moment: waited for, up to two seconds.
    std::optional<os::FileLock> lock;
    for (int poll = 0; poll < 200; ++poll) {
      lock = os::FileLock::try_lock(
          os::UniqueFd(::open(making.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
      if (lock || errno != EWOULDBLOCK) break;
      ::usleep(10'000);
    }
    if (!lock) {
      const int err = errno;
      ::rmdir(making.c_str());
      throw Error(ErrorCode::internal, os::with_reason("cannot lock " + making.string(), err));
    }
    staging = root_ / (std::string(staging_prefix) + tag);
    if (rename_new_folder(making, staging)) return std::move(*lock);
    const int err = errno;
    ::rmdir(making.c_str());
    if (err == EEXIST && attempt < 8) continue;
    throw Error(ErrorCode::internal, os::with_reason("cannot create a sandbox folder in " + root_.string(), err));
  }
}

void SandboxStore::remove_if_maker_gone(const fs::path& staging, std::chrono::seconds min_age) const {
  // Its maker holds its lock from before it takes a staging name until the rename into
  // place (make_staging_folder): one this listing can lock is abandoned. Nothing was ever
  // run in it: it holds only an empty workspace and perhaps the metadata, removable as
  // corral's user.
  // A young one is passed by before it is locked: its maker locks it right after its
  // mkdir, and a listing holding the lock then, however briefly, would fail that create.
  struct stat named {};
  if (min_age.count() > 0 && (::lstat(staging.c_str(), &named) != 0 || is_younger(named, min_age))) return;
  const std::optional<os::FileLock> lock = os::FileLock::try_lock(
      os::UniqueFd(::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)));
  if (!lock) return;
  struct stat st {};
  if (min_age.count() > 0 && (::fstat(lock->fd(), &st) != 0 || is_younger(st, min_age))) return;
  // The maker may have renamed it into place since it was opened: only the name's own.
  if (!os::still_named(lock->fd(), staging)) return;
  std::error_code ec;
  fs::remove_all(staging, ec);
}

std::optional<JailUser> SandboxStore::user_of(const std::string& id) const {
  if (!ids_) return std::nullopt;
  if (std::optional<LocalSandbox> s = find(id); s && s->user) return s->user;
  struct stat st {};
  if (::lstat(workspace_of(id).c_str(), &st) == 0 && S_ISDIR(st.st_mode) && is_jail_id(st.st_uid))
    return JailUser{st.st_uid, st.st_gid};
  return std::nullopt;
}

void SandboxStore::remove(const std::string& id) const {
  fs::path dir = dir_of(id);
  const std::optional<JailUser> user = user_of(id);
  // Freed first: from now on no jail of this sandbox runs, and its files are out of
  // reach of the next sandbox given the uid (below a folder only the caller enters).
  if (user) ids_->release(user->uid, fs::absolute(dir));
  // A folder with no workspace (an in-memory sandbox's) holds its record alone: two
  // calls, without the walk below, remove it; anything more, and the walk does.
  struct stat st {};
  if (::lstat(workspace_of(id).c_str(), &st) != 0 && errno == ENOENT &&
      (::unlink((dir / "sandbox.json").c_str()) == 0 || errno == ENOENT) && ::rmdir(dir.c_str()) == 0)
    return;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  // What the jail made is emptied as the jail's identity, so a symlink it planted (or
  // swaps in meanwhile) never steers root; a workspace from before owners falls to root.
  for (const fs::path& folder : {workspace_of(id), tmp_of(id)})
    if (user && ::lstat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == user->uid)
      run_as(*user, folder, [] { clear_folder("."); });
  make_removable(dir);
  fs::remove_all(dir, ec);
  if (ec) throw Error(ErrorCode::internal, "cannot remove " + dir.string() + ": " + ec.message());
}

void SandboxStore::prepare_workspace(const LocalSandbox& s) const {
  if (!ids_) fs::create_directories(workspace_of(s.id));
  require_workspace(s);
}

std::string SandboxStore::kept_tmp(const LocalSandbox& s) const {
  if (s.in_memory) return "";
  struct stat st {};
  const fs::path tmp = tmp_of(s.id);
  if (::lstat(tmp.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  if (ids_ && !(s.user && st.st_uid == s.user->uid && st.st_gid == s.user->gid)) return "";
  return tmp.string();
}

bool SandboxStore::workspace_owned(const LocalSandbox& s) const {
  struct stat st {};
  if (::lstat(workspace_of(s.id).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  if (!ids_) return true;
  return s.user && st.st_uid == s.user->uid && st.st_gid == s.user->gid;
}

void SandboxStore::require_workspace(const LocalSandbox& s) const {
  if (workspace_owned(s)) return;
  if (ids_ && !s.user)
    throw Error(ErrorCode::unavailable,
                "local sandbox " + s.id + " was made by an older corral, whose jails all ran as the shared user "
                "nobody; corral now gives each sandbox a user of its own",
                "remove it with `corral stop --id " + s.id + "` (or `corral stop --orphans`) and make a new one");
  throw Error(ErrorCode::unavailable,
              "local sandbox " + s.id + "'s workspace is missing or not owned by the jail's user (uid " +
                  std::to_string(s.user ? s.user->uid : ::getuid()) + ")",
              "remove it with `corral stop --id " + s.id + "` and run again");
}

}  // namespace corral::local
