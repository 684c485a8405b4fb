// Running a piece of a test in a forked child (to change its identity, say) and taking
// back what it reports.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "corral/os/fd_write.hpp"

namespace corral::test {

// What `report` returns when run in a forked child (which then exits).
inline std::string in_child(const std::function<std::string()>& report) {
  int out[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    corral::os::write_all(out[1], report());
    ::_exit(0);
  }
  ::close(out[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  ::waitpid(pid, nullptr, 0);
  return text;
}

}  // namespace corral::test
