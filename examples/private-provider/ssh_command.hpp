// Running one command line on the host through the OpenSSH client: always from an argv
// (the local side never uses a shell), with options that make it safe to run unattended,
// ssh's own diagnostics kept apart from the remote command's output, and a failure of ssh
// itself (exit 255 with something in its log) turned into a classified corral::Error.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <corral/os/process.hpp>

#include "settings.hpp"

namespace corral_ssh {

// How long a control step (create, get, list, destroy, stop) may take, connecting included.
inline constexpr long kControlTimeoutSeconds = 120;

struct SshCall {
  std::string stdin_path = "/dev/null";  // what the remote command reads (the archive, for an upload)
  std::function<bool()> stop;            // polled about ten times a second; true ends the local ssh
  long timeout_seconds = 0;              // 0 = none
};

struct SshCaptured {
  int exit_code = 0;  // the remote command's
  std::string out;
  std::string err;
};

class SshClient {
 public:
  explicit SshClient(const Settings& settings) : settings_(settings) {}

  // The ssh argv that runs `remote_command` (a shell command line, quoted by the caller)
  // and logs ssh's own diagnostics to `log_path`.
  std::vector<std::string> argv(const std::string& remote_command, const std::string& log_path) const;

  // Runs `remote_command` to completion and returns its exit code and output. Throws the
  // classified ssh error when ssh itself failed, Error(cancelled) when `call.stop` turned
  // true and Error(timeout) after `call.timeout_seconds`. `action` ("create the lease
  // folder") names the step in messages.
  SshCaptured capture(std::string_view action, const std::string& remote_command, const SshCall& call) const;

  // Runs `remote_command` with its output passed to the callbacks as it arrives. Returns
  // the outcome (cancelled / timed_out when `call` stopped it); throws the classified ssh
  // error when ssh itself failed.
  corral::os::ProcessOutcome stream(std::string_view action, const std::string& remote_command, const SshCall& call,
                                     const corral::os::OutputFn& on_stdout,
                                     const corral::os::OutputFn& on_stderr) const;

 private:
  corral::os::ProcessSpec spec(const std::string& remote_command, const std::string& log_path,
                                const std::string& stdin_path) const;
  const Settings& settings_;
};

}  // namespace corral_ssh
