// Child processes for plugins that drive local tools (bwrap, sbx): spawned from an argv
// without a shell, output streamed as it arrives, stoppable on cancel or timeout.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::sdk {

struct ProcessSpec {
  std::vector<std::string> argv;                // argv[0] is looked up on PATH
  std::optional<std::vector<std::string>> env;  // "NAME=value" entries; nullopt inherits
  std::string cwd;                              // empty = inherit
  std::string stdin_path = "/dev/null";
};

struct ProcessOutcome {
  int exit_code = 0;   // the child's exit status, or 128+signal when killed by one
  bool cancelled = false;
  bool timed_out = false;
};

using OutputFn = std::function<void(std::string_view)>;

// Runs `spec`, passing stdout and stderr chunks to the callbacks as they arrive. Polls
// `cancelled` about ten times a second; on cancel or after `timeout_seconds` (0 = none)
// it sends SIGTERM to the child's process group, then SIGKILL after `grace_seconds`.
// Throws corral::Error(not-found) when argv[0] cannot be executed.
ProcessOutcome run_process(const ProcessSpec& spec, const OutputFn& on_stdout, const OutputFn& on_stderr,
                           const std::function<bool()>& cancelled = {}, long timeout_seconds = 0,
                           int grace_seconds = 3);

struct CapturedProcess {
  int exit_code = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs `spec` to completion and returns its output (for short tool invocations).
CapturedProcess capture_process(const ProcessSpec& spec, long timeout_seconds = 0);

// The absolute path of `program` on PATH (or `program` itself when it has a '/'), or empty.
std::string find_program(const std::string& program);

}  // namespace corral::sdk
