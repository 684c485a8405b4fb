#include "corral/os/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"

namespace fs = std::filesystem;

namespace corral::os {

void write_file_atomically(const fs::path& target, std::string_view text, int mode, const std::string& what,
                           Durability durability) {
  const fs::path dir = target.parent_path();
  std::string temp = (dir / ("." + target.filename().string() + ".XXXXXX.tmp")).string();
  bool created = false;
  auto failure = [&](const char* step) {
    int err = errno;
    if (created) ::unlink(temp.c_str());
    return Error(write_error_code(err),
                 "cannot write " + what + " " + target.string() + ": " + step + " failed: " + std::strerror(err),
                 "check that the state directory is writable and the disk is not full");
  };
  // A fresh name only this call can have, created exclusively (never through a link).
  int fd = ::mkostemps(temp.data(), 4, O_CLOEXEC);
  if (fd < 0) throw failure("create");
  created = true;
  if (::fchmod(fd, static_cast<mode_t>(mode)) != 0 || !write_all(fd, text)) {
    ::close(fd);
    throw failure("write");
  }
  if (durability == Durability::power_loss && ::fsync(fd) != 0) {
    ::close(fd);
    throw failure("fsync");
  }
  ::close(fd);
  if (::rename(temp.c_str(), target.c_str()) != 0) throw failure("rename");
  if (durability == Durability::process_crash) return;
  // Make the rename itself durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace corral::os
