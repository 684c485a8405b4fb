// The bubblewrap command line that jails one command of a local sandbox.
#pragma once

#include <string>
#include <vector>

#include "corral/types.hpp"

namespace corral::local {

struct JailSpec {
  std::string bwrap = "bwrap";  // the bwrap executable
  std::string workspace_dir;    // host folder bound read-write at `workdir`
  std::string workdir = "/workspace";
  std::string hostname;
  bool network = true;          // false: a private network namespace with only loopback
};

// The argv that runs `command` inside the jail: separate mount, pid, ipc and uts
// namespaces, no capabilities, its own session, system folders read-only, a private
// /tmp, the workspace read-write, and death with the parent.
std::vector<std::string> jail_argv(const JailSpec& jail, const Command& command);

// The command's whole environment: a few defaults plus `command.env`. Given to bwrap as
// its environment, which it passes on, so no value ever shows in an argv (`ps`).
std::vector<std::string> jail_env(const Command& command);

// A minimal jail that runs `true`, to tell whether bwrap works here at all.
std::vector<std::string> probe_argv(const std::string& bwrap);

}  // namespace corral::local
