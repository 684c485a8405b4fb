// The bubblewrap command line that jails one command of a local sandbox.
#pragma once

#include <string>
#include <vector>

#include "corral/types.hpp"
#include "jail_user.hpp"

namespace corral::local {

struct JailSpec {
  std::string bwrap = "bwrap";  // the bwrap executable
  std::string workspace_dir;    // folder bound read-write at `workdir`, as bwrap sees it (empty: none)
  std::string workdir = "/workspace";
  std::string hostname;
  bool network = true;          // false: a private network namespace with only loopback
  // When corral is root: the user namespace bwrap (started as `user`) joins with --userns,
  // which maps only `user`. -1: bwrap makes its own namespace for the caller's user.
  int userns_fd = -1;
  JailUser user = kNobody;
  // Where bwrap reports {"exit-code": N} once the command really started (-1: nowhere).
  int status_fd = -1;
};

// The argv that runs `command` inside the jail: separate user, mount, pid, ipc and uts
// namespaces, no capabilities, its own session, system folders read-only, a private
// /tmp, the workspace read-write (when there is one), and death with the parent.
std::vector<std::string> jail_argv(const JailSpec& jail, const Command& command);

// The command's whole environment: a few defaults plus `command.env`. Given to bwrap as
// its environment, which it passes on, so no value ever shows in an argv (`ps`).
std::vector<std::string> jail_env(const Command& command);

}  // namespace corral::local
