// Real child processes for the stand-in's envd: each command runs on this machine, in
// the sandbox's folder. Like envd, it stays in the server's process group: only a
// command that makes itself a group leader (setsid) can be killed as a group.
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::e2b::standin {

struct Child {
  pid_t pid = -1;
  int in_fd = -1;  // write end of its stdin, or its terminal; -1 when stdin is /dev/null
  int out_fd = -1;  // its stdout, or its terminal (the terminal's output: stdout and stderr)
  int err_fd = -1;  // -1 on a terminal
  bool terminal = false;
};

// A terminal's size.
struct TerminalSize {
  unsigned short rows = 0, cols = 0;
};

// Starts `cmd` (looked up on PATH) with `args`, the stand-in's PATH plus `env`, in `cwd`,
// stdin a pipe kept open by the caller (`with_stdin`, envd's default) or /dev/null; with
// `no_network`, in a network namespace of its own (a sandbox without internet access).
// With `terminal`, on a terminal of that size instead, as envd's PTY start does: the child
// leads a session of its own whose controlling terminal it is (stdin, stdout and stderr).
// Throws std::runtime_error with exec's reason when it cannot start.
Child spawn(const std::string& cmd, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env, const std::string& cwd, bool with_stdin,
            bool no_network = false, std::optional<TerminalSize> terminal = std::nullopt);

// Waits for the child; returns its wait status.
int reap(pid_t pid);

// The way into a running child that envd's SendInput, CloseStdin and Update take: the write
// end of its stdin pipe (or none, for a child started without stdin), or its terminal.
// Shared by the Start call that runs the child and those calls; a write waits while the
// child does not read, and close() ends such a wait within a poll.
class ChildInput {
 public:
  // Owns `fd` (-1: the child's stdin is not open), made non-blocking here; `terminal`: it
  // is the child's terminal (a descriptor of its own of the pty's master).
  ChildInput(int fd, bool terminal);
  bool terminal() const { return terminal_; }
  ~ChildInput();
  ChildInput(const ChildInput&) = delete;
  ChildInput& operator=(const ChildInput&) = delete;

  // Writes all of `data`: 0, or the errno that stopped it (EPIPE: the child closed its
  // stdin or ended; EBADF: it was closed here, or never open).
  int write(std::string_view data);
  // Closes it, which the child reads as the end of its input; again is no error.
  void close();
  // A terminal's new size (the child's foreground job gets SIGWINCH): 0 or the errno.
  int resize(TerminalSize size);

 private:
  std::mutex mutex_;
  int fd_;
  bool terminal_;
};

}  // namespace corral::e2b::standin
