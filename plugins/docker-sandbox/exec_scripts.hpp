// The shell lines corral runs in a sandbox through `sbx exec`, which takes an argv only:
// the user's command wrapped so that its exit status and process group are written down
// (a second `sbx exec` reads the one and signals the other, by
// sdk::remote::signal_group_argv). Every path and value
// travels as an argument, never spliced into shell text.
#pragma once

#include <string>
#include <vector>

#include "corral/types.hpp"

namespace corral::docker_sandbox {

// The argv that runs `command`, leaving its exit status in `status_file` when it fails
// and its process group id in `pid_file` while it runs. With `on_terminal` the command
// keeps the session `sbx exec -t` gave it (its terminal's foreground job); otherwise it
// leads a process group of its own.
std::vector<std::string> run_argv(const Command& command, const std::string& status_file,
                                  const std::string& pid_file, bool on_terminal);

// The argv that prints and removes `status_file` (nothing when there is none).
std::vector<std::string> take_status_argv(const std::string& status_file);

}  // namespace corral::docker_sandbox
