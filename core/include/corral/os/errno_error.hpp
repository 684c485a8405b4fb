// What a failed system call means, said once and the same way everywhere.
//
// Threads: every function is safe from any thread (strerror_r-free: the text comes from
// std::strerror, which glibc makes thread-safe).
#pragma once

#include <cerrno>
#include <string>

#include "corral/errors.hpp"

namespace corral::os {

// The cause of a file write or creation that failed with `err` (an errno): quota when the
// disk, the user's disk quota or the file size limit is full (ENOSPC, EDQUOT, EFBIG),
// which freeing space fixes; internal otherwise.
ErrorCode write_error_code(int err);
// `message`, ending with what errno `err` means unless it says so already (libarchive's
// "Write error" does not); `message` alone when `err` is 0.
std::string with_reason(std::string message, int err);
// Error(code, "what: <what errno `err` means>"). Take errno into a variable first: building
// `what` may allocate, and an allocation may change errno.
Error errno_error(ErrorCode code, std::string what, int err);

}  // namespace corral::os
