// Names the plugin when corral dies of a crash in a plugin loaded into its own process:
// nothing can be saved then, but the user learns which plugin crashed doing what, and
// that the lease's claim was kept for `corral stop --id`.
#pragma once

#include <string>

namespace corral {

// While a guard lives, a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS,
// SIGTRAP) or std::terminate first writes one line, "corral: <message>; <hint>", to
// stderr with write(2), the cause (SIGSEGV, ...) in place of kCause in `message`; then
// the process dies as it would have, so its exit status stays honest. Guards do not nest
// within a thread: a thread calls one plugin primitive at a time (a fan-out's shards each
// call from their own thread).
class CrashGuard {
 public:
  static constexpr char kCause = '\x1f';
  // Extends the std::terminate watch to the C++ runtime the library open as `handle` (a
  // dlopen handle) uses, when that is not corral's own: corral links its runtime
  // statically, and a plugin on the shared libstdc++ has a std::terminate of its own.
  static void watch_terminate_of(void* handle);
  CrashGuard(const std::string& message, const std::string& hint);
  ~CrashGuard();
  CrashGuard(const CrashGuard&) = delete;
  CrashGuard& operator=(const CrashGuard&) = delete;
};

}  // namespace corral
