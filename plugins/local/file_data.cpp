#include "file_data.hpp"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "corral/os/fd_write.hpp"

namespace corral::local {
namespace {

// True for the errors that mean "not this way between these two files": try the next.
bool not_this_way(int err) { return err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP; }

}  // namespace

int copy_file_data(int in, int out, bool same_file_system, std::uint64_t max_bytes,
                   const std::function<bool()>& stop) {
  // A clone takes the whole file: only when no bound can be passed.
  if (same_file_system && max_bytes == UINT64_MAX && ::ioctl(out, FICLONE, in) == 0) return 0;
  std::uint64_t left = max_bytes;
  std::uint64_t since_asked = 0;  // bytes moved since `stop` was last asked
  const auto stopped = [&](std::uint64_t moved) {
    if ((since_asked += moved) < kCopyPiece) return false;
    since_asked = 0;
    return stop && stop();
  };
  // Both ways move bytes in the kernel from both files' offsets, so the next way, or the
  // read loop, starts where the last one stopped.
  for (int way = same_file_system ? 0 : 1; way < 2; ++way) {
    while (left > 0) {
      const size_t piece = static_cast<size_t>(std::min(left, kCopyPiece));
      const ssize_t n = way == 0 ? ::copy_file_range(in, nullptr, out, nullptr, piece, 0)
                                 : ::sendfile(out, in, nullptr, piece);
      if (n == 0) return 0;
      if (n > 0) {
        left -= static_cast<std::uint64_t>(n);
        if (left > 0 && stopped(static_cast<std::uint64_t>(n))) return ECANCELED;
        continue;
      }
      if (errno == EINTR) continue;
      if (!not_this_way(errno)) return errno;
      break;  // this way does not go between these files: the next one
    }
  }
  std::vector<char> buffer(1 << 16);
  while (left > 0) {
    const ssize_t n = ::read(in, buffer.data(), static_cast<size_t>(std::min<std::uint64_t>(left, buffer.size())));
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (!os::write_all(out, std::string_view(buffer.data(), static_cast<size_t>(n)))) return errno;
    left -= static_cast<std::uint64_t>(n);
    if (left > 0 && stopped(static_cast<std::uint64_t>(n))) return ECANCELED;
  }
  return 0;
}

}  // namespace corral::local
