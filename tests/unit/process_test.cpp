#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <vector>
#include <chrono>
#include <cstdlib>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>

#include "corral/os/process.hpp"
#include "corral/os/temp_file.hpp"
#include "corral/os/unique_fd.hpp"
#include "corral/types.hpp"
#include "cli.hpp"

using namespace corral::os;

TEST_CASE("a process's stdout and stderr arrive separately and completely") {
  std::string out, err;
  auto o = run_process({{"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a; echo oops >&2; exit 7"}},
                       [&](std::string_view d) { out.append(d); }, [&](std::string_view d) { err.append(d); });
  CHECK(o.exit_code == 7);
  CHECK(out == std::string(300000, 'a'));
  CHECK(err == "oops\n");
}

TEST_CASE("cancelling stops the whole process group promptly") {
  auto start = std::chrono::steady_clock::now();
  int polls = 0;
  auto o = run_process({{"sh", "-c", "sleep 30 & sleep 30; wait"}}, {}, {}, [&] { return ++polls > 3; });
  CHECK(o.cancelled);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("a stop ends the wait even when a descendant left the process group and holds stdout open") {
  corral::test::TempDir dir;
  const std::string pid_file = (dir.path() / "escaped.pid").string();
  int polls = 0;
  // setsid: a new session, so the group's SIGTERM and SIGKILL never reach it.
  auto run = std::async(std::launch::async, [&] {
    return run_process({{"sh", "-c", "setsid sleep 30 & echo $! > " + pid_file + "; sleep 30"}}, {}, {},
                       [&] { return ++polls > 5; });
  });
  const bool returned = run.wait_for(std::chrono::seconds(15)) == std::future_status::ready;
  const pid_t escaped = std::atoi(corral::test::read_file(pid_file).c_str());
  if (escaped > 0) ::kill(escaped, SIGKILL);  // beyond the group's reach: the test ends it
  REQUIRE_MESSAGE(returned, "run_process waited for a process outside the group it stopped");
  CHECK(run.get().cancelled);
}

TEST_CASE("stdout_fd and controlling_terminal: the child writes to the terminal given, which is its /dev/tty") {
  UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  REQUIRE(master.valid());
  REQUIRE(::grantpt(master.get()) == 0);
  REQUIRE(::unlockpt(master.get()) == 0);
  UniqueFd terminal(::open(::ptsname(master.get()), O_RDWR | O_NOCTTY | O_CLOEXEC));
  REQUIRE(terminal.valid());
  ProcessSpec spec;
  // /dev/tty opens only for a process with a controlling terminal.
  spec.argv = {"sh", "-c", "echo on-tty > /dev/tty && echo to-stdout; echo to-stderr >&2"};
  spec.stdin_fd = spec.stdout_fd = terminal.get();
  spec.controlling_terminal = true;
  std::string out, err;
  ProcessOutcome o = run_process(spec, [&](std::string_view d) { out.append(d); },
                                 [&](std::string_view d) { err.append(d); });
  CHECK(o.exit_code == 0);
  CHECK(out.empty());  // stdout went to the terminal, not to on_stdout
  CHECK(err == "to-stderr\n");
  terminal.reset();
  std::string screen;
  char buffer[256];
  for (pollfd p{master.get(), POLLIN, 0}; ::poll(&p, 1, 2000) > 0;) {
    const ssize_t got = ::read(master.get(), buffer, sizeof buffer);
    if (got <= 0) break;  // EIO: all read, and nobody holds the other end
    screen.append(buffer, static_cast<size_t>(got));
  }
  CHECK(screen == "on-tty\r\nto-stdout\r\n");
}

TEST_CASE("a timeout stops the process and says so") {
  auto o = run_process({{"sleep", "30"}}, {}, {}, {}, 1);
  CHECK(o.timed_out);
  CHECK(o.exit_code == 128 + 15);
}

TEST_CASE("a missing program is a not-found error, not a crash") {
  CHECK_THROWS_AS(run_process({{"no-such-program-corral"}}, {}, {}), corral::Error);
  CHECK(find_program("sh").find("/sh") != std::string::npos);
  CHECK(find_program("no-such-program-corral").empty());
}

TEST_CASE("a working folder that is not there is named as what is missing, not the program") {
  corral::os::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "true"};
  spec.cwd = "/no/such/folder/corral";
  try {
    run_process(spec, {}, {});
    FAIL("started in a folder that does not exist");
  } catch (const corral::Error& e) {
    CHECK(std::string(e.what()) == "cannot start '/bin/sh' in /no/such/folder/corral: No such file or directory");
    CHECK(std::string(e.hint()).find("the folder it was to run in") != std::string::npos);
  }
  // A program that cannot be run, in a folder that is there, is blamed itself.
  spec.argv = {"/etc/hostname"};
  spec.cwd = "/";
  try {
    run_process(spec, {}, {});
    FAIL("started a file that is no program");
  } catch (const corral::Error& e) {
    CHECK(std::string(e.what()).find("/etc/hostname") != std::string::npos);
    CHECK(std::string(e.what()).find(" in /") == std::string::npos);
  }
}

TEST_CASE("pass_fds reach the child at the number asked for; no other descriptor does, close-on-exec or not") {
  int kept[2], closed[2], inherited[2];
  REQUIRE(::pipe2(kept, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(closed, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(inherited, 0) == 0);  // as a shell's `9>>file` leaves it: not close-on-exec
  for (bool drop_groups : {false, true}) {
    CAPTURE(drop_groups);
    if (drop_groups && ::geteuid() != 0) continue;  // clear_groups needs root
    ProcessSpec spec;
    // Through /proc/self/fd: dash takes only one-digit descriptors in a redirection.
    auto try_write = [](int fd) { return "{ echo leaked >/proc/self/fd/" + std::to_string(fd) + "; } 2>/dev/null; "; };
    spec.argv = {"sh", "-c", "echo via-kept >&5 && " + try_write(kept[1]) + try_write(closed[1]) +
                                 try_write(inherited[1]) + "echo done"};
    spec.pass_fds = {{kept[1], 5}};
    spec.clear_groups = drop_groups;
    auto o = capture_process(spec, 10);
    CHECK(o.exit_code == 0);
    CHECK(o.out == "done\n");
    char buffer[64] = {};
    for (int fd : {kept[0], closed[0], inherited[0]}) ::fcntl(fd, F_SETFL, O_NONBLOCK);
    CHECK(std::string(buffer, std::max<ssize_t>(0, ::read(kept[0], buffer, sizeof buffer))) == "via-kept\n");
    // Nothing arrived on the others: the child did not have them, at any number.
    CHECK(::read(closed[0], buffer, sizeof buffer) < 0);
    CHECK(::read(inherited[0], buffer, sizeof buffer) < 0);
    // This process's descriptors keep their flags.
    CHECK((::fcntl(kept[1], F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(inherited[1], F_GETFD) & FD_CLOEXEC) == 0);
  }
  for (int fd : {kept[0], kept[1], closed[0], closed[1], inherited[0], inherited[1]}) ::close(fd);
}

TEST_CASE("pass_fds: a target below 3 or named twice is refused before anything starts") {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  ProcessSpec spec;
  spec.argv = {"true"};
  spec.pass_fds = {{fds[1], 1}};
  CHECK_THROWS_AS(capture_process(spec, 10), corral::Error);
  spec.pass_fds = {{fds[1], 4}, {fds[0], 4}};
  CHECK_THROWS_AS(capture_process(spec, 10), corral::Error);
  spec.pass_fds = {{fds[1], 4}, {fds[0], 3}};
  CHECK(capture_process(spec, 10).exit_code == 0);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("clear_groups starts the child with no supplementary groups") {
  if (::geteuid() != 0) return;  // needs CAP_SETGID
  std::vector<gid_t> saved(static_cast<size_t>(std::max(0, ::getgroups(0, nullptr))));
  REQUIRE(::getgroups(static_cast<int>(saved.size()), saved.data()) >= 0);
  gid_t extra[] = {0, 4};
  REQUIRE(::setgroups(2, extra) == 0);
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "grep '^Groups:' /proc/self/status"};
  auto plain = capture_process(spec, 10);
  spec.clear_groups = true;
  auto cleared = capture_process(spec, 10);
  ::setgroups(saved.size(), saved.data());
  CHECK(plain.out.find("0 4") != std::string::npos);  // without it the groups pass on
  CHECK(cleared.out.rfind("Groups:", 0) == 0);
  CHECK(cleared.out.find_first_of("0123456789") == std::string::npos);
  CHECK(cleared.exit_code == 0);
}

TEST_CASE("a child that joins a namespace or drops groups keeps the contract: cwd, env, stdin, exit codes, failures") {
  if (::geteuid() != 0) return;
  int ns = ::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  REQUIRE(ns >= 0);
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "pwd; echo $ONLY; cat; exit 3"};
  spec.env = std::vector<std::string>{"ONLY=this", "PATH=/usr/bin:/bin"};
  spec.cwd = "/usr";
  spec.mount_ns_fd = ns;  // this process's own: joining it changes nothing but the path taken
  auto o = capture_process(spec, 10);
  ::close(ns);
  CHECK(o.exit_code == 3);
  CHECK(o.out == "/usr\nthis\n");  // stdin is /dev/null
  // Executable but not a program: execve fails in the child and run_process says so.
  char path[] = "/tmp/corral-noexec-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, "\x7f" "ELF?", 5) == 5);
  ::close(fd);
  ::chmod(path, 0755);
  ProcessSpec broken;
  broken.argv = {path};
  broken.clear_groups = true;
  CHECK_THROWS_AS(run_process(broken, {}, {}), corral::Error);
  ::unlink(path);
}

namespace {

// The hex mask after `field` ("SigBlk:") in the text of /proc/PID/status.
unsigned long long status_mask(const std::string& status, const std::string& field) {
  const size_t at = status.find(field);
  REQUIRE(at != std::string::npos);
  return std::stoull(status.substr(at + field.size()), nullptr, 16);
}

}  // namespace

TEST_CASE("a child that shares corral's memory until it execs: signals as a fork leaves them, on many threads") {
  // Every child is started with CLONE_VM | CLONE_VFORK.
  struct sigaction ignore {}, old_hup {}, old_pipe {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGHUP, &ignore, &old_hup);
  ::sigaction(SIGPIPE, &ignore, &old_pipe);
  sigset_t term, before;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &term, &before);
  auto o = capture_process(ProcessSpec{{"cat", "/proc/self/status"}}, 10);
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  REQUIRE(o.exit_code == 0);
  CHECK(status_mask(o.out, "SigBlk:") == 0);  // nothing blocked, SIGTERM included
  const unsigned long long ignored = status_mask(o.out, "SigIgn:");
  CHECK((ignored & (1ull << (SIGHUP - 1))) != 0);    // ignored stays ignored, as across exec
  CHECK((ignored & (1ull << (SIGPIPE - 1))) == 0);   // but a tool feels SIGPIPE, SIGINT and SIGTERM
  // Errors still come back from the child: a program that is no program.
  char path[] = "/tmp/corral-noexec-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, "\x7f" "ELF?", 5) == 5);
  ::close(fd);
  ::chmod(path, 0755);
  CHECK_THROWS_WITH_AS(run_process(ProcessSpec{{path}}, {}, {}), doctest::Contains("Exec format error"), corral::Error);
  ::unlink(path);
  // Four threads starting children at once, each passing a descriptor, while this one
  // allocates: every child gets its own and reports it.
  std::atomic<int> right{0}, finished{0};
  std::vector<std::thread> starters;
  for (int t = 0; t < 4; ++t)
    starters.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        TempFile file("process-test", "thread " + std::to_string(t) + "\n");
        const int held = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
        ProcessSpec spec{{"cat", "/dev/fd/5"}};
        spec.pass_fds = {{held, 5}};
        auto got = capture_process(spec, 10);
        ::close(held);
        if (got.exit_code == 0 && got.out == "thread " + std::to_string(t) + "\n") ++right;
      }
      ++finished;
    });
  std::vector<std::string> churn;
  while (finished < 4) churn.assign(64, std::string(1000, 'x'));
  for (std::thread& s : starters) s.join();
  CHECK(right == 100);
}

namespace {

// Forks a process that runs `spec` with run_process (as a plugin helper or corral would),
// passing the child's stdout on to `report`; returns its pid. It exits when run_process returns.
pid_t run_in_a_child(const ProcessSpec& spec, int report) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      run_process(spec, [&](std::string_view d) { (void)!::write(report, d.data(), d.size()); }, {});
    } catch (...) {
    }
    ::_exit(0);
  }
  return pid;
}

// The pid written as a line on `fd`, waiting up to ten seconds for it; 0 when none came.
pid_t pid_from(int fd) {
  std::string text;
  for (int i = 0; i < 200 && text.find('\n') == std::string::npos; ++i) {
    pollfd p{fd, POLLIN, 0};
    char buffer[64];
    if (::poll(&p, 1, 50) > 0) {
      ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got <= 0) break;
      text.append(buffer, static_cast<size_t>(got));
    }
  }
  return text.find('\n') == std::string::npos ? 0 : static_cast<pid_t>(std::stoi(text));
}

}  // namespace

TEST_CASE("a child dies with the process that started it, which cannot stop it once SIGKILLed") {
  ProcessSpec spec{{"sh", "-c", "echo $$; exec sleep 60"}};
  SUBCASE("as the same user") {}
  SUBCASE("as another identity (changing it clears a parent-death signal set before)") {
    if (::geteuid() != 0) return;  // needs CAP_SETUID
    spec.uid = 65534;
    spec.gid = 65534;
  }
  int report[2];
  REQUIRE(::pipe2(report, O_CLOEXEC) == 0);
  const pid_t runner = run_in_a_child(spec, report[1]);
  ::close(report[1]);
  REQUIRE(runner > 0);
  const pid_t child = pid_from(report[0]);
  ::close(report[0]);
  ::kill(runner, SIGKILL);
  ::waitpid(runner, nullptr, 0);
  REQUIRE(child > 0);
  CHECK(corral::test::gone_within(child, std::chrono::seconds(5)));
  ::kill(child, SIGKILL);  // when the check failed: nothing outlives the test
}

TEST_CASE("a callback that throws leaves no child running: it is killed and reaped first") {
  pid_t child = 0;
  auto first_line = [&](std::string_view d) {
    child = static_cast<pid_t>(std::stoi(std::string(d)));
    throw std::runtime_error("the sink gave up");
  };
  CHECK_THROWS_AS(run_process({{"sh", "-c", "echo $$; exec sleep 60"}}, first_line, {}), std::runtime_error);
  REQUIRE(child > 0);
  CHECK(::kill(child, 0) != 0);  // gone and reaped, not a zombie
  if (::kill(child, 0) == 0) ::kill(child, SIGKILL);
}

TEST_CASE("uid and gid start the child as that identity, without root's groups, and change no thread of corral") {
  if (::geteuid() != 0) return;  // needs CAP_SETUID
  // The child shares this process's memory until it execs: a libc wrapper's change of
  // identity would reach every thread of it, and a dumpable memory shared with a task of
  // another user could be traced by that user.
  std::atomic<bool> stop{false};
  std::atomic<long> other_euid{-1};
  std::thread other([&] {
    while (!stop) other_euid = ::geteuid();
  });
  REQUIRE(::prctl(PR_SET_DUMPABLE, 1) == 0);
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "id -u; id -g; id -G; grep -c '^CapEff:.0000000000000000' /proc/self/status"};
  spec.uid = 65534;
  spec.gid = 65534;
  auto o = capture_process(spec, 10);
  stop = true;
  other.join();
  CHECK(o.exit_code == 0);
  CHECK(o.out == "65534\n65534\n65534\n1\n");  // no other group, and no capabilities left
  CHECK(::geteuid() == 0);
  CHECK(::getegid() == 0);
  CHECK(other_euid == 0);
  CHECK(::prctl(PR_GET_DUMPABLE) == 0);  // and it stays so
}

TEST_CASE("a child gets the baseline environment, never the host's unless named") {
  ::setenv("CORRAL_TEST_PLANTED_SECRET", "s3cret-planted", 1);
  ProcessSpec plain{{"sh", "-c", "env"}};
  auto p = capture_process(plain, 30);
  REQUIRE(p.exit_code == 0);
  CHECK(p.out.find("s3cret-planted") == std::string::npos);
  CHECK(p.out.find("CORRAL_SANDBOX=1") != std::string::npos);
  CHECK(p.out.find("PATH=/usr/local/sbin:") != std::string::npos);

  ProcessSpec named{{"sh", "-c", "echo \"$CORRAL_TEST_PLANTED_SECRET\""}};
  named.inherit = {"CORRAL_TEST_PLANTED_SECRET"};
  CHECK(capture_process(named, 30).out == "s3cret-planted\n");

  ProcessSpec all{{"sh", "-c", "echo \"$CORRAL_TEST_PLANTED_SECRET\""}};
  all.inherit = {"*"};
  CHECK(capture_process(all, 30).out == "s3cret-planted\n");

  CHECK(command_environment({{"A", "1"}, {"HOME", "/w"}}) ==
        std::vector<std::string>{"A=1", "CORRAL_SANDBOX=1", "HOME=/w", "LANG=C.UTF-8",
                                 "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"});
  ::unsetenv("CORRAL_TEST_PLANTED_SECRET");
}

TEST_CASE("a plugin's temporary file is private, holds what it was given and goes with the object") {
  std::string path;
  {
    corral::os::TempFile file("unit", std::string("env\0with nul", 12));
    path = file.path();
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(file.read() == std::string("env\0with nul", 12));
    CHECK(file.read(3) == "env");
    CHECK(path.find("corral-unit-") != std::string::npos);
  }
  CHECK(::access(path.c_str(), F_OK) != 0);
}
