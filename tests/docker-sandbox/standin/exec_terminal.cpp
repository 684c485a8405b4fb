#include "exec_terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "exec_runner.hpp"

namespace sbx_standin {
namespace {

volatile sig_atomic_t resized = 0;

void on_resize(int) { resized = 1; }

// The size of the stand-in's terminal (stdout's, as the docker CLI asks), given to `corral_end`.
void pass_size_on(int corral_end) {
  winsize size{};
  if (::ioctl(1, TIOCGWINSZ, &size) == 0 || ::ioctl(0, TIOCGWINSZ, &size) == 0)
    ::ioctl(corral_end, TIOCSWINSZ, &size);
}

void write_all(int fd, const char* data, ssize_t size) {
  while (size > 0) {
    const ssize_t w = ::write(fd, data, static_cast<size_t>(size));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    data += w;
    size -= w;
  }
}

// Passes on what the command wrote, when some is there within `timeout_ms`: the bytes
// passed, 0 when none came, -1 once there is no more (its end is closed by all).
ssize_t relay_output(int corral_end, int timeout_ms) {
  pollfd p{corral_end, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return 0;
  char buffer[65536];
  const ssize_t got = ::read(corral_end, buffer, sizeof buffer);
  if (got > 0) write_all(1, buffer, got);
  return got < 0 && errno == EINTR ? 0 : got > 0 ? got : -1;
}

}  // namespace

bool open_exec_terminal(ExecTerminal& terminal) {
  winsize size{};
  if (::ioctl(1, TIOCGWINSZ, &size) != 0) ::ioctl(0, TIOCGWINSZ, &size);
  if (::openpty(&terminal.corral_end, &terminal.command_end, nullptr, nullptr, &size) != 0) return false;
  ::fcntl(terminal.corral_end, F_SETFD, FD_CLOEXEC);
  ::fcntl(terminal.command_end, F_SETFD, FD_CLOEXEC);
  return true;
}

void attach_exec_terminal(int command_end) {
  ::setsid();
  ::ioctl(command_end, TIOCSCTTY, 0);
  for (int fd = 0; fd < 3; ++fd) ::dup2(command_end, fd);
}

int relay_exec_terminal(int corral_end, pid_t pid, bool interactive) {
  termios saved{};
  const bool raw = ::tcgetattr(0, &saved) == 0;
  if (raw) {
    termios keys = saved;
    ::cfmakeraw(&keys);
    ::tcsetattr(0, TCSANOW, &keys);
  }
  struct sigaction resize {};
  resize.sa_handler = on_resize;
  ::sigaction(SIGWINCH, &resize, nullptr);
  pass_size_on(corral_end);  // a resize before the handler was there
  if (interactive) {
    ::signal(SIGPIPE, SIG_IGN);
    std::thread(feed_stdin, ::fcntl(corral_end, F_DUPFD_CLOEXEC, 3)).detach();
  }
  int status = 0;
  for (bool ended = false; !ended;) {
    if (resized) {
      resized = 0;
      pass_size_on(corral_end);
    }
    relay_output(corral_end, 10);
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    ended = w == pid || (w < 0 && errno != EINTR);
  }
  // What the command wrote last is still in the terminal; a process it left behind may
  // keep its end open, so only what is there now is passed on.
  while (relay_output(corral_end, 50) > 0) {
  }
  if (raw) ::tcsetattr(0, TCSANOW, &saved);
  return status;
}

}  // namespace sbx_standin
