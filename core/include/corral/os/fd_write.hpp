// Writing whole buffers to file descriptors, the one loop every output path needs
// (write(2) may write less than asked, or be interrupted by a signal). What a failed
// write means is errno_error.hpp's, included here for the callers that need both.
//
// Threads: write_all may run on any thread; two at once on one descriptor interleave.
#pragma once

#include <string>
#include <string_view>

#include "corral/os/errno_error.hpp"

namespace corral::os {

// Writes all of `data` to `fd`, retrying short writes and EINTR. False when a write
// fails (errno says why: EPIPE when the reader went away, ENOSPC, ...).
bool write_all(int fd, std::string_view data);

}  // namespace corral::os
