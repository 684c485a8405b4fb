// `sbx exec -t` in the stand-in: the command runs on a pseudo-terminal of the stand-in's
// own, as `docker exec -t` runs it on one the runtime makes, and the client relays. Like
// the docker CLI it puts its own terminal in raw mode while the command runs (keys pass
// as bytes, Ctrl-C among them), gives the command's terminal its own terminal's size and
// passes every resize on (its SIGWINCH).
#pragma once

#include <sys/types.h>

namespace sbx_standin {

struct ExecTerminal {
  int corral_end = -1;   // the stand-in's end (the pty master)
  int command_end = -1;  // the command's controlling terminal, stdin, stdout and stderr
};

// Opens the command's terminal, sized as the stand-in's own; false (errno set) when none.
bool open_exec_terminal(ExecTerminal& terminal);

// In the forked child: a session of its own whose controlling terminal, stdin, stdout
// and stderr are `command_end`.
void attach_exec_terminal(int command_end);

// Relays until `pid` ended: the keys (with `interactive`) to the command, its output to
// stdout, resizes on. Returns its wait status.
int relay_exec_terminal(int corral_end, pid_t pid, bool interactive);

}  // namespace sbx_standin
