// One command in a kept sandbox as it is now: no sync of the working tree, no keep rules
// (the lease stays kept), the way an agent works in a sandbox it started. The lease is
// taken exclusively for the command's time, and a paused sandbox is resumed first.
//
// Threads: as leases.hpp: an exec belongs to its caller's thread; execs on different
// leases may run at once through one Session, each with its own Ui.
#pragma once

#include <string>
#include <vector>

#include "service/leases.hpp"

namespace corral::service {

struct ExecSpec {
  LeaseSpec lease;
  std::vector<std::string> argv;  // the command, word for word, or
  std::string shell;              // a /bin/sh -c string
  std::string cwd;                // relative to the sandbox's workspace root; "" = the root
  std::vector<std::string> env;   // variables to forward, by name (secrets are refused)
  std::string timeout;            // a duration ("10m"); "" = none
};

// Runs `spec`'s command in its lease's sandbox, its output to `ui`; returns its exit code.
// Throws invalid-argument for no command, a cwd outside the workspace or a bad duration,
// not-found for a lease or sandbox that is gone, cancelled or timeout when stopped.
int exec(Session& session, Ui& ui, const ExecSpec& spec);

}  // namespace corral::service
