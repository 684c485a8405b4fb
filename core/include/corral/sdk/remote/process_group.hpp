// A user's command in a remote sandbox as a process group of its own whose id is written
// to a pid file, so that a second command there can pass it the user's signal (Ctrl-C,
// SIGTERM: exec-signals) or end the whole group (--timeout, a kill), for providers whose
// API has no signal of its own (a Kubernetes exec, a Daytona session). Every path and
// value travels as an argument, never spliced into shell text.
#pragma once

#include <string>
#include <vector>

namespace corral::sdk::remote {

// The argv that runs `argv` in a process group of its own whose id it writes to
// `pid_file`, and exits with its status. The group's leader is a shell that traps INT,
// TERM and HUP, so that a signal passed to the group ends in the command's own exit code
// (its trap's), not in the shell's death. Where there is no `setsid -w` (busybox), the
// command takes the shell's place, so that its pid is the one written. The script sets
// no variable before the command runs: an environment exported before reaches it as is.
// With Leftovers::end, what the command leaves running in its group (a background child)
// gets SIGTERM once it ended, for a provider that used to end a run's processes with it.
enum class Leftovers { keep, end };
std::vector<std::string> in_process_group_argv(const std::string& pid_file, const std::vector<std::string>& argv,
                                               Leftovers leftovers = Leftovers::keep);

// The argv that passes `signal` (SIGINT, SIGTERM, SIGHUP: the user's stop) to the process
// group `pid_file` names, and nothing more: the command may trap it.
std::vector<std::string> signal_group_argv(const std::string& pid_file, int signal);

// The argv that ends the process group `pid_file` names: SIGTERM, then SIGKILL 3 s later.
std::vector<std::string> kill_group_argv(const std::string& pid_file);

}  // namespace corral::sdk::remote
