#include "process.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stdexcept>

#include "private_network.hpp"

namespace corral::e2b::standin {

Child spawn(const std::string& cmd, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env, const std::string& cwd, bool with_stdin,
            bool no_network, std::optional<TerminalSize> terminal) {
  const test::PrivateNetwork network = test::prepare_private_network();
  // Everything the child needs is prepared before fork: after it, only exec-safe calls.
  std::vector<std::string> argv_s{cmd};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::map<std::string, std::string> merged;
  if (const char* path = getenv("PATH")) merged["PATH"] = path;
  for (const auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> env_s;
  for (const auto& [k, v] : merged) env_s.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  // Pipes for stdin, stdout and stderr, or a terminal for all three (its master here).
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, status[2];
  int master = -1;
  char slave[128] = "";
  if (terminal) {
    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    const winsize size{terminal->rows, terminal->cols, 0, 0};
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, slave, sizeof slave) != 0 ||
        ioctl(master, TIOCSWINSZ, &size) != 0) {
      const int e = errno;
      if (master >= 0) close(master);
      throw std::runtime_error(std::string("pty: ") + strerror(e));
    }
  } else if ((with_stdin && pipe2(in, O_CLOEXEC) != 0) || pipe2(out, O_CLOEXEC) != 0 ||
             pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  }
  if (pipe2(status, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    if (terminal) {
      // A session of its own, whose controlling terminal the first terminal it opens becomes.
      setsid();
      const int fd = open(slave, O_RDWR);
      if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) != 0) {
        int e = -200000 - errno;  // below -200000: the terminal could not be made its own
        (void)!write(status[1], &e, sizeof e);
        _exit(127);
      }
      dup2(fd, 0);
      dup2(fd, 1);
      dup2(fd, 2);
      if (fd > 2) close(fd);
    } else {
      dup2(with_stdin ? in[0] : open("/dev/null", O_RDONLY), 0);
      dup2(out[1], 1);
      dup2(err[1], 2);
    }
    if (no_network) {
      if (int e = test::enter_private_network(network)) {
        e = -100000 - e;  // below -100000: entering the network namespace failed
        (void)!write(status[1], &e, sizeof e);
        _exit(127);
      }
    }
    if (chdir(cwd.c_str()) != 0) {
      int e = -errno;  // negative: chdir, not exec, failed
      (void)!write(status[1], &e, sizeof e);
      _exit(127);
    }
    execvpe(argv[0], argv.data(), envp.data());
    int e = errno;
    (void)!write(status[1], &e, sizeof e);
    _exit(127);
  }
  for (int fd : {in[0], out[1], err[1], status[1]})
    if (fd >= 0) close(fd);
  int child_errno = 0;
  ssize_t n = read(status[0], &child_errno, sizeof child_errno);
  close(status[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    for (int fd : {in[1], out[0], err[0], master})
      if (fd >= 0) close(fd);
    reap(pid);
    if (child_errno <= -200000) throw std::runtime_error(std::string("pty: ") + strerror(-200000 - child_errno));
    if (child_errno <= -100000)
      throw std::runtime_error(std::string("network namespace: ") + strerror(-100000 - child_errno));
    if (child_errno < 0) throw std::runtime_error("chdir " + cwd + ": " + strerror(-child_errno));
    throw std::runtime_error("exec: \"" + cmd + "\": " + strerror(child_errno));
  }
  // On a terminal, input goes to a descriptor of the master of its own (which ChildInput closes).
  if (terminal) return Child{pid, fcntl(master, F_DUPFD_CLOEXEC, 0), master, -1, true};
  return Child{pid, in[1], out[0], err[0], false};
}

int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

ChildInput::ChildInput(int fd, bool terminal) : fd_(fd), terminal_(terminal) {
  // (On a terminal the master's reader sees it too: it reads only what poll says is there.)
  if (fd_ >= 0) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

ChildInput::~ChildInput() { close(); }

int ChildInput::write(std::string_view data) {
  // A child that closed its stdin makes the write fail with EPIPE rather than end the
  // stand-in: SIGPIPE stays blocked on the thread, and what it left pending is taken.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  while (!data.empty()) {
    std::lock_guard lock(mutex_);
    if (fd_ < 0) return EBADF;
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) {
      const int error = errno;
      const timespec now{0, 0};
      while (::sigtimedwait(&pipe_signal, nullptr, &now) == SIGPIPE) {
      }
      return error;
    }
    // Full: wait a moment for the child to read, the lock held only that long.
    pollfd p{fd_, POLLOUT, 0};
    ::poll(&p, 1, 50);
  }
  return 0;
}

int ChildInput::resize(TerminalSize size) {
  std::lock_guard lock(mutex_);
  if (!terminal_ || fd_ < 0) return ENOTTY;
  const winsize ws{size.rows, size.cols, 0, 0};
  return ::ioctl(fd_, TIOCSWINSZ, &ws) == 0 ? 0 : errno;
}

void ChildInput::close() {
  std::lock_guard lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace corral::e2b::standin
