#include "workspace/staging.hpp"

#include "base/paths.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"
#include "corral/os/file_lock.hpp"
#include "base/hash.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

constexpr const char* kPrefix = "workspace-";

}  // namespace

int sweep_stale_archives(const fs::path& dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0) continue;
    os::UniqueFd fd(::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (!fd.valid()) continue;
    // A file made this last minute may not be locked yet by its builder: leave it.
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || st.st_mtime > ::time(nullptr) - 60) continue;
    // Its builder holds an exclusive lock until it is done; a free lock means it died.
    if (os::FileLock::try_lock(std::move(fd)) && ::unlink(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

StagedArchive::StagedArchive(const fs::path& dir) {
  // The archive holds the user's files: a private folder, like the claims'.
  paths::make_private_folder(dir, "folder of workspace archives");
  sweep_stale_archives(dir);
  path_ = dir / fmt::format("{}{}-{}.tar.gz", kPrefix, ::getpid(), random_hex(6));
  // Made new (O_EXCL), so the lock is free: nobody else can have it open yet.
  std::optional<os::FileLock> lock =
      os::FileLock::try_lock(os::UniqueFd(::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)));
  if (!lock) {
    const int err = errno;
    throw Error(os::write_error_code(err), os::with_reason("cannot create the workspace archive " + path_.string(), err),
                "check that the state directory is writable and the disk is not full");
  }
  lock_ = std::move(*lock);
}

StagedArchive::~StagedArchive() { ::unlink(path_.c_str()); }

}  // namespace corral
