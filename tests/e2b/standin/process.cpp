#include "process.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stdexcept>

#include "private_network.hpp"

namespace corral::e2b::standin {

Child spawn(const std::string& cmd, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env, const std::string& cwd, bool with_stdin,
            bool no_network) {
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

  int in[2] = {-1, -1}, out[2], err[2], status[2];
  if ((with_stdin && pipe2(in, O_CLOEXEC) != 0) || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      pipe2(status, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    dup2(with_stdin ? in[0] : open("/dev/null", O_RDONLY), 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
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
  if (with_stdin) close(in[0]);
  close(out[1]);
  close(err[1]);
  close(status[1]);
  int child_errno = 0;
  ssize_t n = read(status[0], &child_errno, sizeof child_errno);
  close(status[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    close(out[0]);
    close(err[0]);
    if (with_stdin) close(in[1]);
    reap(pid);
    if (child_errno <= -100000)
      throw std::runtime_error(std::string("network namespace: ") + strerror(-100000 - child_errno));
    if (child_errno < 0) throw std::runtime_error("chdir " + cwd + ": " + strerror(-child_errno));
    throw std::runtime_error("exec: \"" + cmd + "\": " + strerror(child_errno));
  }
  return Child{pid, in[1], out[0], err[0]};
}

int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

ChildInput::ChildInput(int fd) : fd_(fd) {
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

void ChildInput::close() {
  std::lock_guard lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace corral::e2b::standin
