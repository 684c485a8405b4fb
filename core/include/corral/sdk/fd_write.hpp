// Writing whole buffers to file descriptors, the one loop every output path needs
// (write(2) may write less than asked, or be interrupted by a signal).
#pragma once

#include <string_view>

namespace corral::sdk {

// Writes all of `data` to `fd`, retrying short writes and EINTR. False when a write
// fails (errno says why: EPIPE when the reader went away, ENOSPC, ...).
bool write_all(int fd, std::string_view data);

}  // namespace corral::sdk
