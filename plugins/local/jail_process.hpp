// Running one command in a jail: the namespaces root prepares, bwrap's process, and
// telling a jail that never started from a command that failed.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bwrap.hpp"
#include "corral/os/process.hpp"

namespace corral::local {

class JailNamespaces;

// Where a jail's workspace comes from: a host folder (empty: none), or the tmpfs of
// namespaces made with JailNamespaces::create_in_memory, held until the jail ends.
struct JailWorkspace {
  JailWorkspace(std::string host_folder) : folder(std::move(host_folder)) {}  // NOLINT: a folder is the usual case
  explicit JailWorkspace(std::shared_ptr<const JailNamespaces> namespaces) : in_memory(std::move(namespaces)) {}
  std::string folder;
  std::string tmp_folder;  // a kept sandbox's /tmp, a host folder (empty: a fresh tmpfs for each command)
  std::shared_ptr<const JailNamespaces> in_memory;
};

// With jail.egress, the jail reaches the hosts it lists through an EgressProxy for the
// command's life, and `egress` (when given) receives what the command asked for.
// Runs `command` in `jail` with `workspace` bound at its workdir; as `as_user` in a namespace mapping only that user when given (corral is root),
// else in bwrap's own user namespace. Output streams to the callbacks as
// os::run_process's does. Throws Error(unavailable), with a hint, when the jail itself
// cannot start; a command that cannot be executed is the command's failure (exit 1).
// `io` says what else the command is given.
struct JailIo {
  int stdin_fd = -1;  // the command's stdin instead of /dev/null (a pipe, a pty's end)
  // With a pty's end as stdin_fd: its other end, whose foreground job signals go to.
  int terminal = -1;
  // A signal it returns goes to the command and what it started (SignalRelay).
  std::function<int()> take_signal;
  std::function<void()> on_tick;  // called about ten times a second while the command runs
};
os::ProcessOutcome run_jailed(JailSpec jail, const JailWorkspace& workspace, const std::optional<JailUser>& as_user,
                               const Command& command, const os::OutputFn& on_stdout, const os::OutputFn& on_stderr,
                               const std::function<bool()>& cancelled = {}, long timeout_seconds = 0,
                               EgressReport* egress = nullptr, const JailIo& io = {});

}  // namespace corral::local
