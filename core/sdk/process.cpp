#include "corral/sdk/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "corral/types.hpp"

extern char** environ;

namespace corral::sdk {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& items) {
  std::vector<char*> out;
  out.reserve(items.size() + 1);
  for (const auto& s : items) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0) throw Error(ErrorCode::internal, std::string("pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

std::string find_program(const std::string& program) {
  if (program.empty()) return {};
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0 ? program : std::string();
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = rest.find(':');
    std::string dir = colon == 0 ? std::string(".") : std::string(rest.substr(0, colon));
    std::string candidate = dir + "/" + program;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return {};
}

ProcessOutcome run_process(const ProcessSpec& spec, const OutputFn& on_stdout, const OutputFn& on_stderr,
                           const std::function<bool()>& cancelled, long timeout_seconds, int grace_seconds) {
  if (spec.argv.empty()) throw Error(ErrorCode::internal, "run_process: empty argv");
  std::string program = find_program(spec.argv[0]);
  if (program.empty())
    throw Error(ErrorCode::not_found, "cannot find '" + spec.argv[0] + "' on PATH");

  Pipe out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, spec.stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group, so a stop reaches the whole tree; default signal dispositions.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  auto argv = c_strings(spec.argv);
  std::vector<char*> envp;
  if (spec.env) envp = c_strings(*spec.env);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), spec.env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw Error(ErrorCode::unavailable, "cannot start '" + spec.argv[0] + "': " + std::strerror(rc));
  out.close_end(1);
  err.close_end(1);

  using Clock = std::chrono::steady_clock;
  auto started = Clock::now();
  std::optional<Clock::time_point> kill_at;
  ProcessOutcome outcome;
  auto stop = [&](bool by_timeout) {
    if (kill_at) return;
    (by_timeout ? outcome.timed_out : outcome.cancelled) = true;
    ::kill(-pid, SIGTERM);
    kill_at = Clock::now() + std::chrono::seconds(grace_seconds);
  };

  std::vector<char> buffer(64 * 1024);
  int open_streams = 2;
  while (open_streams > 0) {
    pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
    int n = ::poll(fds, 2, 100);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && n > 0; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (got > 0) {
        const OutputFn& sink = i == 0 ? on_stdout : on_stderr;
        if (sink) sink(std::string_view(buffer.data(), static_cast<size_t>(got)));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        (i == 0 ? out : err).close_end(0);
        --open_streams;
      }
    }
    if (cancelled && cancelled()) stop(false);
    if (timeout_seconds > 0 && Clock::now() - started > std::chrono::seconds(timeout_seconds)) stop(true);
    if (kill_at && Clock::now() > *kill_at) ::kill(-pid, SIGKILL);
  }

  int status = 0;
  while (true) {
    pid_t w = ::waitpid(pid, &status, kill_at ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (w == 0) {
      if (Clock::now() > *kill_at) ::kill(-pid, SIGKILL);
      ::usleep(20'000);
    }
  }
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) outcome.exit_code = 128 + WTERMSIG(status);
  // Descendants that outlived the leader still belong to the group: end them too.
  if (outcome.cancelled || outcome.timed_out) ::kill(-pid, SIGKILL);
  return outcome;
}

CapturedProcess capture_process(const ProcessSpec& spec, long timeout_seconds) {
  CapturedProcess captured;
  ProcessOutcome o = run_process(
      spec, [&](std::string_view d) { captured.out.append(d); },
      [&](std::string_view d) { captured.err.append(d); }, {}, timeout_seconds, 1);
  captured.exit_code = o.exit_code;
  captured.timed_out = o.timed_out;
  return captured;
}

}  // namespace corral::sdk
