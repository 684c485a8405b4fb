// `sbx exec` in the stand-in: really runs the command on this machine, in the workspace,
// with only the sandbox's own environment plus --env-file / -e values. Like a container
// runtime, the command lives apart from the client: it leads its own session and its
// output goes through files the client relays, so killing `sbx exec` does not stop it
// (only `sbx stop` / `sbx rm` do), which is how `docker exec` behaves. With -i its stdin
// is a pipe the client's stdin is copied into, closed at that input's end (or when the
// client goes); without, it is empty. With -t it runs on a terminal instead
// (exec_terminal.hpp), whose end only the stand-in holds. It starts with every signal at
// its default action, as a container runtime starts it: `docker exec` passes no signal
// of the client's on.
#pragma once

#include <string>
#include <vector>

#include "state.hpp"

namespace sbx_standin {

struct ExecRequest {
  std::string workdir;                 // -w; empty = the first workspace
  std::vector<std::string> env_files;  // --env-file, in order
  std::vector<std::string> env;        // -e NAME=value or NAME
  bool detach = false;                 // -d
  bool interactive = false;            // -i: the client's stdin is the command's, to its end
  bool tty = false;                    // -t: the command runs on a terminal (exec_terminal.hpp)
  std::vector<std::string> command;    // COMMAND [ARG...]
};

// Copies this process's stdin to `fd` until its end or until the command stops reading,
// then closes `fd`: the command sees the end of its input.
void feed_stdin(int fd);

// Runs `request` in sandbox `record`; returns the exit status sbx exec reports.
int run_exec(const State& state, const Record& record, const ExecRequest& request);

}  // namespace sbx_standin
