// The command lines corral runs in a Pod through exec (which takes an argv only: no
// folder, no environment): the user's command started in its folder with its variables
// in a process group of its own whose id is written down, so that a second exec can pass
// it the user's signal (Ctrl-C, SIGTERM) or end the whole group (--timeout, a kill); and
// its own steps (unpack, extend). Every path and value travels as an argument, never
// spliced into shell text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "corral/types.hpp"

namespace corral::kubernetes {

// Where the Pod's keep-alive loop reads its deadline (seconds since the epoch).
inline constexpr const char* kDeadlineFile = "/tmp/corral-deadline";

// The argv that runs `command` in `folder`, writing its process group id to `pid_file`;
// with Command::tty, as the foreground job of the terminal the exec gives it.
std::vector<std::string> run_argv(const Command& command, const std::string& folder, const std::string& pid_file);

// The argv that unpacks `size` bytes of a .tar.gz on stdin into `workdir`.
std::vector<std::string> unpack_argv(const std::string& workdir, std::uint64_t size);

// The argv that moves the keep-alive deadline to `seconds` from now (never earlier).
std::vector<std::string> extend_argv(std::int64_t seconds);

// The keep-alive loop the container runs: makes the workdir, then waits until the deadline
// file's time passes (the sandbox's lifetime) or SIGTERM comes, and exits.
std::string keep_alive_script();

}  // namespace corral::kubernetes
