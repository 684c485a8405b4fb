// Real child processes for the stand-in's envd: each command runs on this machine, in
// the sandbox's folder. Like envd, it stays in the server's process group: only a
// command that makes itself a group leader (setsid) can be killed as a group.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace corral::e2b::standin {

struct Child {
  pid_t pid = -1;
  int in_fd = -1;  // write end of its stdin; -1 when stdin is /dev/null
  int out_fd = -1;
  int err_fd = -1;
};

// Starts `cmd` (looked up on PATH) with `args`, the stand-in's PATH plus `env`, in `cwd`,
// stdin a pipe kept open by the caller (`with_stdin`, envd's default) or /dev/null; with
// `no_network`, in a network namespace of its own (a sandbox without internet access).
// Throws std::runtime_error with exec's reason when it cannot start.
Child spawn(const std::string& cmd, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env, const std::string& cwd, bool with_stdin,
            bool no_network = false);

// Waits for the child; returns its wait status.
int reap(pid_t pid);

}  // namespace corral::e2b::standin
