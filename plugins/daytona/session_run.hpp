// One command run through a Daytona process session, output followed live: a fresh
// session, the wrapped command started with runAsync, its split log followed over the
// WebSocket (reconnecting after a drop, skipping what was already delivered, as the
// toolbox replays a log from its start) and each stream decoded from the wrapper's
// encoding (command_line.hpp), then the exit code; the user's input, when asked for, is
// passed to the command meanwhile. Whatever way the run ends
// early (stop, broken stream, error), the session is deleted, which ends the command.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/sdk/remote/command_hooks.hpp"
#include "corral/types.hpp"
#include "toolbox.hpp"

namespace corral::daytona {

struct SessionCommand {
  std::vector<std::string> argv;
  std::string cwd;   // absolute folder in the sandbox
  StringMap env;     // exactly the variables the command gets on top of the sandbox's
  std::string home;  // the sandbox user's home folder (where the env file goes)
  // Whose input is the command's stdin, to its end (command_input.hpp); none: /dev/null.
  const sdk::Host* input = nullptr;
};

// stop() true stops the command (the session is deleted) and ends run_in_session with
// Error(cancelled).
using SessionHooks = sdk::remote::CommandHooks;

// How often and how long run_in_session checks on a command while its stream is quiet.
// A log stream sends nothing while a command is quiet, and Daytona sends no pings: the
// command's status is checked every `watch` instead (which also counts as activity against
// the sandbox's auto-stop); a stream still open `close_grace` after the exit code was
// recorded is stalled and followed again; the exit code must show within `exit_code_wait`
// of the stream's end.
struct SessionTiming {
  std::chrono::milliseconds watch{30000};
  std::chrono::milliseconds close_grace{10000};
  std::chrono::milliseconds exit_code_wait{10000};
};

// Runs `command` and returns its exit code. `step` names it in errors ("run the command").
int run_in_session(Toolbox& toolbox, const SessionCommand& command, const SessionHooks& hooks, const std::string& step,
                   const SessionTiming& timing = {});

}  // namespace corral::daytona
