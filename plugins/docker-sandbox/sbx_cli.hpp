// Spawning the `sbx` executable: always from an argv (never a shell string), control
// commands bounded by a timeout and stoppable on Ctrl-C, failures summarised.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "corral/os/process.hpp"

namespace corral::docker_sandbox {

struct SbxResult {
  int exit_code = 0;
  std::string out;
  std::string err;
};

// What a streamed `sbx` gets besides its output callbacks.
struct SbxIo {
  int stdin_fd = -1;             // its stdin instead of /dev/null (the caller keeps and closes it)
  // A terminal's end as its stdout too, and its controlling terminal (`sbx exec -t`, which
  // asks the terminal's size and learns of resizes by SIGWINCH); on_stdout then gets nothing.
  bool on_terminal = false;
  std::function<void()> on_tick;  // called about ten times a second while it runs
};

class SbxCli {
 public:
  // `cli` is a name looked up on PATH or a path; `timeout_seconds` bounds control commands.
  SbxCli(std::string cli, long timeout_seconds) : cli_(std::move(cli)), timeout_(timeout_seconds) {}

  // The executable's full path; throws unavailable (with install guidance) when missing.
  std::string executable() const;

  // Runs `sbx args...` to completion without judging its exit code. Throws timeout after
  // the control timeout and cancelled when `cancelled` turns true.
  SbxResult capture(const std::vector<std::string>& args, const std::function<bool()>& cancelled = {}) const;

  // Like capture, and throws the summarised sbx error when the exit code is not 0.
  SbxResult run(const std::vector<std::string>& args, const std::function<bool()>& cancelled = {}) const;

  // Runs `sbx args...` with output streamed to the callbacks and no control timeout
  // (the caller passes the command's own); reports cancel/timeout in the outcome.
  os::ProcessOutcome stream(const std::vector<std::string>& args, const os::OutputFn& on_stdout,
                             const os::OutputFn& on_stderr, const std::function<bool()>& cancelled,
                             long timeout_seconds, const SbxIo& io = {}) const;

  const std::string& cli() const { return cli_; }
  long timeout_seconds() const { return timeout_; }

 private:
  std::vector<std::string> argv(const std::vector<std::string>& args) const;
  std::string cli_;
  long timeout_;
};

}  // namespace corral::docker_sandbox
