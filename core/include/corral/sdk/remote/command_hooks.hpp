// What runs a command in a remote sandbox (E2B's envd, a Daytona session) tells its
// caller as the command runs, and asks it: output as it arrives, whether to stop, and a
// warning when a command may outlive the run. One shape for every remote runner, and
// the two ways a provider fills it: for the user's command, and for a step of its own.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "corral/sdk.hpp"

namespace corral::sdk::remote {

struct CommandHooks {
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;
  // Polled about ten times a second; true stops the command and ends the run with
  // Error(cancelled).
  std::function<bool()> stop;
  // Told when the command may still be running after the run gave up on it.
  std::function<void(const std::string&)> warn;
};

// For the user's command: its output to the user as it arrives, stopped by Ctrl-C or its --timeout (`deadline`).
CommandHooks command_hooks(const Host& host, CommandDeadline& deadline);

// For a step of the provider's own (unpack, pack): stdout dropped, stderr to `on_stderr`, stopped by Ctrl-C.
CommandHooks step_hooks(const Host& host, std::function<void(std::string_view)> on_stderr);

// For a command of the provider's own beside the user's (passing a signal on, a kill):
// output dropped, never stopped (the user's stop is what it carries out).
CommandHooks quiet_hooks();

}  // namespace corral::sdk::remote
