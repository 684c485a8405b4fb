#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "claims.hpp"
#include "corral/errors.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

Error cannot_write(const fs::path& path, const std::string& what, int err) {
  return Error(ErrorCode::invalid_argument,
               fmt::format("cannot write the {} to {}: {}", what, path.string(), std::strerror(err)),
               "name a writable file, a FIFO or /dev/stdout");
}

// Writes `text` into an existing non-regular file (device, FIFO, terminal) as it is.
void write_through(const fs::path& path, std::string_view text, const std::string& what) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw cannot_write(path, what, errno);
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw cannot_write(path, what, err);
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  ::close(fd);
}

}  // namespace

void write_output_file(const fs::path& path, std::string_view text, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw cannot_write(path, what, EISDIR);
    write_through(path, text, what);
    return;
  }
  // A symlink to a regular file keeps being a symlink: its target is replaced.
  std::error_code ec;
  fs::path target = fs::is_symlink(fs::symlink_status(path, ec)) ? fs::canonical(path, ec) : path;
  if (ec) target = path;
  if (target.filename().empty()) throw cannot_write(path, what, EISDIR);
  try {
    write_file_atomically(target.has_parent_path() ? target : fs::path(".") / target, text, 0644, what);
  } catch (const Error& e) {
    // A full disk stays a quota problem: the file named may be fine once there is room.
    if (e.code() == ErrorCode::quota)
      throw Error(ErrorCode::quota, e.what(), "free space on its disk, or name a file on another one");
    throw Error(ErrorCode::invalid_argument, e.what(), "name a writable file, a FIFO or /dev/stdout");
  }
}

}  // namespace corral
