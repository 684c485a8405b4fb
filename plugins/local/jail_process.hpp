// Running one command in a jail: the namespaces root prepares, bwrap's process, and
// telling a jail that never started from a command that failed.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "bwrap.hpp"
#include "corral/sdk/process.hpp"

namespace corral::local {

// Runs `command` in `jail` with `workspace` (a host folder, empty for none) bound at its
// workdir; as `as_user` in a namespace mapping only that user when given (corral is root),
// else in bwrap's own user namespace. Output streams to the callbacks as
// sdk::run_process's does. Throws Error(unavailable), with a hint, when the jail itself
// cannot start; a command that cannot be executed is the command's failure (exit 1).
sdk::ProcessOutcome run_jailed(JailSpec jail, const std::string& workspace, const std::optional<JailUser>& as_user,
                               const Command& command, const sdk::OutputFn& on_stdout, const sdk::OutputFn& on_stderr,
                               const std::function<bool()>& cancelled = {}, long timeout_seconds = 0);

}  // namespace corral::local
