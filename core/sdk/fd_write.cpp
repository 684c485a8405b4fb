#include "corral/sdk/fd_write.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace corral::sdk {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;  // a write that makes no progress would loop for ever
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string with_reason(std::string message, int err) {
  if (err == 0) return message;
  const std::string reason = std::strerror(err);
  if (message.find(reason) == std::string::npos) message += ": " + reason;
  return message;
}

ErrorCode write_error_code(int err) {
  return err == ENOSPC || err == EDQUOT || err == EFBIG ? ErrorCode::quota : ErrorCode::internal;
}

}  // namespace corral::sdk
