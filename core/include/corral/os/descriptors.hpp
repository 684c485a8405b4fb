// Which open files a program corral starts may have: stdin, stdout and stderr, and only
// what is passed to it by name. A descriptor the user's shell left open (`9>>file`), or
// one a library opened without O_CLOEXEC, must never reach a sandboxed command or a tool.
//
// Threads: close_on_exec_from is async-signal-safe; a descriptor another thread opens
// meanwhile without O_CLOEXEC escapes it, so every descriptor corral opens has the flag.
#pragma once

namespace corral::os {

// Marks every descriptor from `first` up close-on-exec. Async-signal-safe, so a child
// may call it between fork and exec; corral calls it at start for what it inherited.
void close_on_exec_from(int first) noexcept;

}  // namespace corral::os
