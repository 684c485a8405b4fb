// A pod's processes on this machine: its folder is the container's root filesystem (the
// host's /usr and /etc read-only in it, every other path the pod's own), and each
// command runs there under bubblewrap as a real process in a process group of its own,
// without a network when a NetworkPolicy denies its egress. Every process is forked from
// one long-lived thread, so bwrap's --die-with-parent ends them all with the stand-in and
// never with the short-lived thread of the request that started them.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace corral::kubernetes::standin {

struct ProcessSpec {
  std::filesystem::path root;   // the pod's folder: the command's "/"
  std::string hostname;         // the pod's name, as in a real pod
  std::string working_dir = "/";
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value", exactly these
  bool no_network = false;
  bool with_stdin = false;
  // stdin, stdout and stderr a pseudo-terminal of its own, its controlling terminal (exec
  // with tty=true): the command a session leader as runc makes it, so that the terminal's
  // keys (Ctrl-C) signal its foreground job and a resize its SIGWINCH.
  bool tty = false;
  std::filesystem::path log;  // non-empty: stdout and stderr appended here (a container's log)
};

struct StartedProcess {
  pid_t pid = -1;  // also its process group
  int in_fd = -1;  // write end of its stdin, or -1; with tty a copy of the terminal's master
  int out_fd = -1;  // with tty: the terminal's master, also for its size (TIOCSWINSZ)
  int err_fd = -1;  // -1 with tty: the terminal merges stderr into stdout
};

// A command that cannot start, in the words containerd uses ("exec: \"x\": executable file
// not found in $PATH").
class StartError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Makes `root` a container root: the mount points bwrap binds over and the merged-/usr
// links (bin -> usr/bin, ...) this machine has, plus `working_dir`.
void prepare_pod_root(const std::filesystem::path& root, const std::string& working_dir);

// Where `program` is in the pod's view (its PATH when it has no '/'), as a path in the pod;
// nullopt when there is no such executable.
std::optional<std::string> find_in_pod(const std::filesystem::path& root, const std::string& program);

class Spawner {
 public:
  Spawner();
  ~Spawner();
  Spawner(const Spawner&) = delete;
  Spawner& operator=(const Spawner&) = delete;
  // Starts `spec` (on the spawner's thread) and returns its descriptors; throws StartError.
  StartedProcess start(const ProcessSpec& spec);
  // Whether bwrap can make a pod here (found, and namespaces allowed); the reason when not.
  std::optional<std::string> unavailable() const { return unavailable_; }

 private:
  void loop();
  StartedProcess fork_exec(const ProcessSpec& spec);
  std::string bwrap_;
  std::optional<std::string> unavailable_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

// Waits for `pid`; its exit code, or 128 + the signal that killed it.
int wait_exit_code(pid_t pid);

}  // namespace corral::kubernetes::standin
