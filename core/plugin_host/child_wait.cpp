#include "plugin_host/child_wait.hpp"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>

namespace corral {

bool reap_until(pid_t pid, std::chrono::steady_clock::time_point until, int& status) {
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return r == pid;
    if (std::chrono::steady_clock::now() >= until) return false;
    ::usleep(2000);
  }
}

bool ended_until(pid_t pid, std::chrono::steady_clock::time_point until) {
  for (;;) {
    siginfo_t info{};
    int r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not our child any more: nothing to wait for
    if (std::chrono::steady_clock::now() >= until) return false;
    ::usleep(2000);
  }
}

void kill_and_reap(pid_t pid, int& status) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

}  // namespace corral
