// Writing whole buffers to file descriptors, the one loop every output path needs
// (write(2) may write less than asked, or be interrupted by a signal), and what a
// failed write means.
#pragma once

#include <string>
#include <string_view>

#include "corral/errors.hpp"

namespace corral::sdk {

// Writes all of `data` to `fd`, retrying short writes and EINTR. False when a write
// fails (errno says why: EPIPE when the reader went away, ENOSPC, ...).
bool write_all(int fd, std::string_view data);

// The cause of a file write or creation that failed with `err` (an errno): quota when the
// disk, the user's disk quota or the file size limit is full (ENOSPC, EDQUOT, EFBIG),
// which freeing space fixes; internal otherwise.
ErrorCode write_error_code(int err);
// `message`, ending with what errno `err` means unless it says so already (libarchive's
// "Write error" does not); `message` alone when `err` is 0.
std::string with_reason(std::string message, int err);

}  // namespace corral::sdk
