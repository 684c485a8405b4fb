// Waiting that a stop request cuts short: a plugin that waits (the pause before a retry, a
// poll of a sandbox that is still starting) must never hold up a user who pressed Ctrl-C.
//
// Threads: sleep_unless_stopped calls `stop` on the calling thread.
#pragma once

#include <chrono>
#include <functional>

namespace corral::os {

// Sleeps `duration` in 50 ms slices; false as soon as `stop` (may be empty) says so, asked between them and at the end.
bool sleep_unless_stopped(std::chrono::milliseconds duration, const std::function<bool()>& stop);

}  // namespace corral::os
