#include "corral/os/errno_error.hpp"

#include <cstring>

namespace corral::os {

std::string with_reason(std::string message, int err) {
  if (err == 0) return message;
  const std::string reason = std::strerror(err);
  if (message.find(reason) == std::string::npos) message += ": " + reason;
  return message;
}

ErrorCode write_error_code(int err) {
  return err == ENOSPC || err == EDQUOT || err == EFBIG ? ErrorCode::quota : ErrorCode::internal;
}

Error errno_error(ErrorCode code, std::string what, int err) { return Error(code, with_reason(std::move(what), err)); }

}  // namespace corral::os
