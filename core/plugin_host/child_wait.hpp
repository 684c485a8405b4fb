// Waiting for and describing a child process that runs plugin code (the spec probe and
// the isolation helper), so both say the same thing about a crash or a hang.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

namespace corral {

// Waits for `pid` until `until`; true when it was reaped into `status`.
bool reap_until(pid_t pid, std::chrono::steady_clock::time_point until, int& status);

// Waits until `pid` has ended, without reaping it (so its process group id stays its own
// and can still be killed); true when it ended before `until`.
bool ended_until(pid_t pid, std::chrono::steady_clock::time_point until);

// Kills `pid` and its process group with SIGKILL and reaps it into `status`.
void kill_and_reap(pid_t pid, int& status);

// "SIGSEGV" for SIGSEGV: the name people search for.
std::string signal_name(int sig);

}  // namespace corral
