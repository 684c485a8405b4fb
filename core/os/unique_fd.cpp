#include "corral/os/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "corral/os/errno_error.hpp"

namespace corral::os {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() { reset(); }

int UniqueFd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Pipe::Pipe() {
  int fd[2];
  if (::pipe2(fd, O_CLOEXEC) != 0) {
    const int err = errno;
    throw errno_error(ErrorCode::internal, "cannot make a pipe", err);
  }
  read = UniqueFd(fd[0]);
  write = UniqueFd(fd[1]);
}

}  // namespace corral::os
