#include "run_as.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "corral/types.hpp"

namespace corral::local {
namespace {

// Reports a failure to the parent as code, message and hint separated by NULs (a message
// may span lines) and ends the child.
[[noreturn]] void report(int fd, ErrorCode code, const std::string& message, const std::string& hint) {
  const char nul = '\0';
  std::string text = std::to_string(static_cast<int>(code)) + nul + message + nul + hint;
  (void)!::write(fd, text.data(), text.size());
  ::_exit(1);
}

}  // namespace

void run_as(const JailUser& user, const std::filesystem::path& dir, const std::function<void()>& work) {
  int pipe_fd[2];
  if (::pipe2(pipe_fd, O_CLOEXEC) != 0)
    throw Error(ErrorCode::internal, std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(pipe_fd[0]);
    ::close(pipe_fd[1]);
    throw Error(ErrorCode::internal, std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    ::close(pipe_fd[0]);
    // gid before uid: once the uid is dropped the gid can no longer change.
    if (::chdir(dir.c_str()) != 0 || ::setgroups(0, nullptr) != 0 || ::setresgid(user.gid, user.gid, user.gid) != 0 ||
        ::setresuid(user.uid, user.uid, user.uid) != 0)
      report(pipe_fd[1], ErrorCode::internal,
             "cannot enter " + dir.string() + " as uid " + std::to_string(user.uid) + ": " + std::strerror(errno), "");
    try {
      work();
    } catch (const Error& e) {
      report(pipe_fd[1], e.code(), e.what(), e.hint());
    } catch (const std::exception& e) {
      report(pipe_fd[1], ErrorCode::internal, e.what(), "");
    }
    ::_exit(0);  // no atexit handlers or stdio flushes: they belong to the parent
  }
  ::close(pipe_fd[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = ::read(pipe_fd[0], buffer, sizeof buffer)) != 0;) {
    if (got > 0) text.append(buffer, static_cast<size_t>(got));
    else if (errno != EINTR) break;
  }
  ::close(pipe_fd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  size_t a = text.find('\0'), b = a == std::string::npos ? a : text.find('\0', a + 1);
  if (b == std::string::npos)
    throw Error(ErrorCode::internal, "a helper working in " + dir.string() + " ended abnormally");
  throw Error(static_cast<ErrorCode>(std::stoi(text.substr(0, a))), text.substr(a + 1, b - a - 1), text.substr(b + 1));
}

}  // namespace corral::local
