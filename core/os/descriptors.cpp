#include "corral/os/descriptors.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/close_range.h>

namespace corral::os {

void close_on_exec_from(int first) noexcept {
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  // Kernels before 5.11: one descriptor at a time, up to the limit on their numbers.
  rlimit limit{};
  long last = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                  ? static_cast<long>(limit.rlim_cur)
                  : 1L << 20;
  for (long fd = first; fd < last; ++fd) {
    int flags = ::fcntl(static_cast<int>(fd), F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) ::fcntl(static_cast<int>(fd), F_SETFD, flags | FD_CLOEXEC);
  }
}

}  // namespace corral::os
