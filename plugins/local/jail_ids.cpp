#include "jail_ids.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"
#include "corral/os/file_lock.hpp"
#include "corral/os/random.hpp"

namespace fs = std::filesystem;

namespace corral::local {
namespace {

// How many uids reserve() tries before it calls the range full.
constexpr int kTries = 256;
// A registration left empty this long was abandoned between its creation and its
// first write (its corral killed there): free again.
constexpr time_t kAbandonedEmptySeconds = 60;
// A registration names a folder: a few hundred bytes at most.
constexpr size_t kMaxRegistration = 4096;

Error register_error(const fs::path& path, const std::string& step, int err) {
  return Error(ErrorCode::unavailable,
               os::with_reason("cannot " + step + " " + path.string() + ", the register of the local jails' users",
                                err),
               "corral as root keeps it in /var/lib/corral/jail-ids: check that /var/lib is writable");
}

// True when `uid` is in a "name:first:count" range of the subordinate-id file `path`.
bool in_subordinate_range(const char* path, uid_t uid) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    char* end = nullptr;
    const unsigned long long first = std::strtoull(line.c_str() + a + 1, &end, 10);
    if (end != line.c_str() + b) continue;
    const unsigned long long count = std::strtoull(line.c_str() + b + 1, &end, 10);
    if (uid >= first && uid - first < count) return true;
  }
  return false;
}

// A uid of `count` from `first` chosen at random: a collision with another corral's
// choice is the exception, and a range in use here and there does not slow every create.
uid_t random_id(uid_t first, uid_t count) {
  const unsigned long n = std::stoul(os::random_hex(4), nullptr, 16);
  return first + static_cast<uid_t>(n % count);
}

// The text of the registration open as `fd`, or nullopt when it is not a registration
// file (not a regular file, or too big).
std::optional<std::string> read_registration(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > static_cast<off_t>(kMaxRegistration))
    return std::nullopt;
  std::string text(static_cast<size_t>(st.st_size), '\0');
  if (::pread(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) return std::nullopt;
  return text;
}

// True when the registration open (and locked) as `fd` names a sandbox folder that is
// gone, or was left empty long ago: its uid is nobody's now.
bool stale(int fd) {
  const std::optional<std::string> owner = read_registration(fd);
  if (!owner) return false;  // not ours to judge: never reclaimed
  if (owner->empty()) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 && ::time(nullptr) - st.st_mtime >= kAbandonedEmptySeconds;
  }
  struct stat st {};
  return ::lstat(owner->c_str(), &st) != 0 && errno == ENOENT;
}

// Writes `owner` as the whole registration open as `fd`.
bool write_registration(int fd, const fs::path& owner) {
  const std::string text = owner.string();
  return ::ftruncate(fd, 0) == 0 && os::write_all(fd, text);
}

}  // namespace

bool is_jail_id(uid_t uid) { return uid >= kJailIdFirst && uid - kJailIdFirst < kJailIdCount; }

JailIdReservation& JailIdReservation::operator=(JailIdReservation&& other) noexcept {
  if (this != &other) {
    drop();
    user_ = other.user_;
    file_ = std::move(other.file_);
    lock_ = std::move(other.lock_);
    committed_ = other.committed_;
  }
  return *this;
}

JailIdReservation::~JailIdReservation() { drop(); }

void JailIdReservation::drop() {
  // Still locked by us: nobody else can have taken it over, so the name is ours to remove.
  if (lock_.held() && !committed_) ::unlink(file_.c_str());
  lock_ = os::FileLock();
}

JailIds::JailIds(fs::path dir, std::function<bool(uid_t)> taken_elsewhere, uid_t first, uid_t count)
    : dir_(std::move(dir)), taken_elsewhere_(std::move(taken_elsewhere)), first_(first), count_(count ? count : 1) {}

fs::path JailIds::default_dir() { return "/var/lib/corral/jail-ids"; }

bool JailIds::known_to_this_machine(uid_t uid) {
  std::vector<char> buffer(16384);
  struct passwd pw {};
  struct passwd* found_user = nullptr;
  struct group gr {};
  struct group* found_group = nullptr;
  if (::getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found_user) == 0 && found_user) return true;
  if (::getgrgid_r(static_cast<gid_t>(uid), &gr, buffer.data(), buffer.size(), &found_group) == 0 && found_group)
    return true;
  return in_subordinate_range("/etc/subuid", uid) || in_subordinate_range("/etc/subgid", uid);
}

void JailIds::ensure_dir() const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw register_error(dir_, "create", ec.value());
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0) throw register_error(dir_, "examine", errno);
  if (!S_ISDIR(st.st_mode)) throw register_error(dir_, "use", ENOTDIR);
  if ((st.st_mode & 07777) != 0700 && ::chmod(dir_.c_str(), 0700) != 0) throw register_error(dir_, "protect", errno);
}

JailIdReservation JailIds::reserve(const fs::path& owner) const {
  ensure_dir();
  for (int attempt = 0; attempt < kTries; ++attempt) {
    const uid_t uid = random_id(first_, count_);
    if (taken_elsewhere_ && taken_elsewhere_(uid)) continue;
    const fs::path file = file_of(uid);
    os::UniqueFd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0 && errno != EEXIST) throw register_error(file, "create", errno);
    const bool made = fd.get() >= 0;
    std::optional<os::FileLock> lock;
    if (made) {
      // Locked at once: a reclaimer that finds it empty first leaves it to its maker
      // (empty means "being written" for a minute), and holds it only to look.
      os::FileLock::lock_polling(fd.get(), "the register of uid " + std::to_string(uid));
      lock.emplace(std::move(fd));
    } else {
      // Taken: free again only once nobody holds it and its sandbox's folder is gone.
      lock = os::FileLock::try_lock(os::UniqueFd(::open(file.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)));
      if (!lock) continue;
    }
    if (!os::still_named(lock->fd(), file)) continue;
    if (!made && !stale(lock->fd())) continue;
    if (!write_registration(lock->fd(), owner)) {
      const int err = errno;
      if (made) ::unlink(file.c_str());
      throw register_error(file, "write", err);
    }
    return JailIdReservation({uid, static_cast<gid_t>(uid)}, file, std::move(*lock));
  }
  throw Error(ErrorCode::unavailable,
              "no free uid for a local jail in corral's range after " + std::to_string(kTries) + " tries (" +
                  dir_.string() + " holds the ones taken)",
              "remove sandboxes you no longer need: `corral stop --orphans`, `corral list` shows the kept ones");
}

void JailIds::release(uid_t uid, const fs::path& owner) const {
  const fs::path file = file_of(uid);
  os::UniqueFd fd(::open(file.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return;
  // Held only while a registration is written: a short wait.
  os::FileLock::lock_polling(fd.get(), "the register of uid " + std::to_string(uid));
  const os::FileLock lock(std::move(fd));
  if (!os::still_named(lock.fd(), file)) return;
  if (read_registration(lock.fd()) == std::optional<std::string>(owner.string())) ::unlink(file.c_str());
}

fs::path JailIds::owner_of(uid_t uid) const {
  const os::UniqueFd fd(::open(file_of(uid).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return {};
  return read_registration(fd.get()).value_or("");
}

}  // namespace corral::local
