// Child processes for plugins that drive local tools (bwrap, sbx): spawned from an argv
// without a shell, output streamed as it arrives, stoppable on cancel or timeout.
//
// Threads: run_process and capture_process may run on several threads at once; each
// child is started by, dies with, and reports to the thread that called. The callbacks
// run on the calling thread; no thread of corral changes identity for a child's uid.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::os {

// The environment every command starts from: PATH (the usual system folders), HOME=/tmp,
// LANG=C.UTF-8 and CORRAL_SANDBOX=1. Nothing of the host's environment is in it.
std::vector<std::string> baseline_environment();
// baseline_environment() plus `env` (a command's allow-listed variables, which win):
// what a plugin passes as ProcessSpec::env to run a user's command.
std::vector<std::string> command_environment(const std::map<std::string, std::string>& env);

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH
  // "NAME=value" entries: exactly these. nullopt: baseline_environment() plus the host
  // variables named in `inherit` — never the host's whole environment by accident, so a
  // plugin that forgets to set it cannot hand the user's secrets to a command.
  std::optional<std::vector<std::string>> env;
  std::string cwd;                              // empty = inherit
  std::string stdin_path = "/dev/null";
  // When 0 or above, the child's stdin instead of stdin_path (a pipe's read end the caller
  // feeds); the caller keeps it and closes it.
  int stdin_fd = -1;
  // When 0 or above, the child's stdout instead of a pipe (a terminal's end, whose other
  // end the caller reads); run_process's on_stdout then gets nothing.
  int stdout_fd = -1;
  // The child leads a session of its own whose controlling terminal is its stdin (a
  // terminal's end): a tool that runs a command on a terminal, such as `docker exec -t`,
  // then learns of the terminal's resizes by SIGWINCH.
  bool controlling_terminal = false;
  // Descriptors the child gets besides stdin, stdout and stderr: this process's `fd`
  // becomes the child's descriptor `as` (3 or above, each once), e.g. a namespace fd for
  // bwrap --userns. Nothing else crosses, whatever its own close-on-exec flag.
  struct PassedFd {
    int fd;
    int as;
  };
  std::vector<PassedFd> pass_fds;
  // Start the child with no supplementary groups: a root parent handing the child to a
  // less trusted identity must not leave it root's groups (setns/setuid keep them).
  // Needs CAP_SETGID: the start fails otherwise.
  bool clear_groups = false;
  // A user namespace (nsfs fd) the child joins first, before mount_ns_fd: one the caller
  // made, hence owns, for a mount namespace that namespace owns. -1: stay.
  int user_ns_fd = -1;
  // A mount namespace (nsfs fd) the child joins before it execs; `cwd` is then looked
  // up there, and without one the child starts at its root. Needs CAP_SYS_ADMIN. -1: stay.
  int mount_ns_fd = -1;
  // Start the child as this uid/gid (after joining mount_ns_fd, with no supplementary
  // groups): root handing a tool to an unprivileged identity. Needs CAP_SETUID/SETGID. -1: keep.
  long uid = -1;
  long gid = -1;
  // Host variables passed on by name when `env` is nullopt ("HOME", "DOCKER_HOST"). "*"
  // passes the whole host environment: only for a host tool acting as the user (git on
  // the user's checkout, a provider's own CLI), never for the user's command.
  std::vector<std::string> inherit;
};

struct ProcessOutcome {
  int exit_code = 0;   // the child's exit status, or 128+signal when killed by one
  bool cancelled = false;
  bool timed_out = false;
};

using OutputFn = std::function<void(std::string_view)>;

// Runs `spec`, passing stdout and stderr chunks to the callbacks as they arrive. Polls
// `cancelled` about ten times a second; on cancel or after `timeout_seconds` (0 = none)
// it sends SIGTERM to the child's process group, then SIGKILL after `grace_seconds`, and
// returns a second later even when a descendant that left the group (setsid) still holds
// its stdout or stderr open.
// The child dies with the calling thread (PR_SET_PDEATHSIG, SIGKILL), so a corral or
// plugin helper that is killed takes its tools with it (the child only, not what it
// started). A callback that throws gets the child's group killed and reaped first.
// `on_tick`, when set, is called on the calling thread at each look at `cancelled` (for
// work of the caller's own while the child runs: passing a signal on).
// Throws corral::Error(not-found) when argv[0] cannot be executed.
ProcessOutcome run_process(const ProcessSpec& spec, const OutputFn& on_stdout, const OutputFn& on_stderr,
                           const std::function<bool()>& cancelled = {}, long timeout_seconds = 0,
                           int grace_seconds = 3, const std::function<void()>& on_tick = {});

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

// Starts `argv` (argv[0] the program's path) in `cwd` as a process of its own session, at
// a lower priority, its stdin /dev/null and its output appended to `log` (which starts
// over once past `max_log_bytes`), and does not wait for it: the intermediate child exits
// at once, so the process is nobody's child here and holds no descriptor of ours (no lock
// of ours among them). For work that outlives its caller: a pool's refill. Throws
// Error(internal) when the log is not a regular file or no process can be made.
void spawn_detached(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log,
                    long max_log_bytes);

}  // namespace corral::os
