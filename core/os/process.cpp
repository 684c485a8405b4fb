#include "corral/os/process.hpp"

#include "corral/os/descriptors.hpp"
#include "corral/os/errno_error.hpp"
#include "corral/os/unique_fd.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <linux/close_range.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <cstring>
#include <exception>
#include <map>

#include "corral/sdk/printable.hpp"
#include "corral/types.hpp"

extern char** environ;

namespace corral::os {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& items) {
  std::vector<char*> out;
  out.reserve(items.size() + 1);
  for (const auto& s : items) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The environment the child of `spec` gets (see ProcessSpec::env and ::inherit).
std::vector<std::string> child_environment(const ProcessSpec& spec) {
  if (spec.env) return *spec.env;
  if (std::find(spec.inherit.begin(), spec.inherit.end(), "*") != spec.inherit.end()) {
    std::vector<std::string> all;
    for (char** e = environ; *e; ++e) all.emplace_back(*e);
    return all;
  }
  std::map<std::string, std::string> chosen;
  for (const std::string& name : spec.inherit)
    if (const char* value = std::getenv(name.c_str())) chosen[name] = value;
  return command_environment(chosen);
}

// Where passed descriptors wait in the child before they take their numbers: above
// every target (targets are small numbers a program names on its command line).
constexpr int kPassedFdBase = 100;

// `spec.pass_fds`, checked: each target from 3 to below kPassedFdBase, and used once.
std::vector<ProcessSpec::PassedFd> checked_passed_fds(const ProcessSpec& spec) {
  std::vector<ProcessSpec::PassedFd> passed = spec.pass_fds;
  for (size_t i = 0; i < passed.size(); ++i) {
    bool reused = std::any_of(passed.begin(), passed.begin() + static_cast<long>(i),
                              [&](const ProcessSpec::PassedFd& p) { return p.as == passed[i].as; });
    if (passed[i].fd < 0 || passed[i].as < 3 || passed[i].as >= kPassedFdBase || reused)
      throw Error(ErrorCode::internal, "run_process: descriptor " + std::to_string(passed[i].fd) +
                                           " cannot be passed as " + std::to_string(passed[i].as));
  }
  return passed;
}

// What a child that could not start tells its parent through the report pipe.
struct ChildFailure {
  enum Step : int { setup, working_folder, exec };
  Step step;
  int err;  // errno
};

// The started child's `pid`, once its exec is known to have worked (the report pipe
// closed on exec); throws with the child's errno, reaped, when it did not.
pid_t finish_start(const ProcessSpec& spec, pid_t pid, Pipe& report) {
  report.write.reset();
  ChildFailure failure{};
  ssize_t got;
  do got = ::read(report.read.get(), &failure, sizeof failure);
  while (got < 0 && errno == EINTR);
  if (got > 0) {
    int status;
    ::waitpid(pid, &status, 0);
    // The folder is named when it is what is missing: "No such file" would blame the program.
    if (failure.step == ChildFailure::working_folder)
      throw Error(ErrorCode::unavailable, "cannot start '" + sdk::printable(spec.argv[0]) + "' in " +
                                              sdk::printable(spec.cwd) + ": " + std::strerror(failure.err),
                  "the folder it was to run in is not there, or not one this user may enter");
    throw Error(ErrorCode::unavailable, "cannot start '" + spec.argv[0] + "': " + std::strerror(failure.err));
  }
  return pid;
}

// What the child needs, all prepared before it starts: it shares corral's memory, so it
// must not allocate, and it only reads this.
struct SharedChild {
  const char* program;
  char* const* argv;
  char* const* env;
  const char* stdin_path;
  int stdin_fd;     // -1: stdin_path
  const char* cwd;  // nullptr: stay
  int out_fd, err_fd, report_fd;
  const ProcessSpec::PassedFd* passed;
  int* moved;  // one slot a passed descriptor, for its copy out of the way
  size_t passed_count;
  pid_t parent;
  int user_ns_fd, mount_ns_fd;  // -1: stay
  bool clear_groups;
  long uid, gid;  // -1: keep
  bool controlling_terminal;
};

// The child runs on this process's memory beside its threads, until it execs: raw system
// calls only, none of which libc or a sanitizer wraps, since a wrapper's bookkeeping
// (errno aside) would be the starting thread's or another's.
#define CORRAL_SHARED_CHILD __attribute__((no_sanitize("address", "undefined"), noinline))

// The kernel's struct sigaction, for rt_sigaction.
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  unsigned long mask;
};

// Reports the failed `step` and errno `err` to the parent and ends the child.
[[noreturn]] CORRAL_SHARED_CHILD void shared_child_fails(int report_fd, ChildFailure::Step step, long err) {
  const ChildFailure failure{step, static_cast<int>(err)};
  ::syscall(SYS_write, report_fd, &failure, sizeof failure);
  ::syscall(SYS_exit, 127);
  __builtin_unreachable();
}

// `rc`, unless it says a system call failed: then the child reports errno and ends.
CORRAL_SHARED_CHILD long or_fail(long rc, int report_fd, ChildFailure::Step step = ChildFailure::setup) {
  if (rc < 0) shared_child_fails(report_fd, step, errno);
  return rc;
}

// `from` as descriptor `to` (dup2, which not every architecture has as a system call).
CORRAL_SHARED_CHILD long raw_dup_to(int from, int to) {
  return from == to ? 0 : ::syscall(SYS_dup3, from, to, 0);
}

// The body of start_child's child, on corral's memory until it execs: system calls only.
// Changes of identity are the child's alone this way: the kernel keeps credentials per
// task, while libc's wrappers would apply them to every thread of corral.
CORRAL_SHARED_CHILD int run_shared_child(void* arg) {
  const SharedChild& c = *static_cast<const SharedChild*>(arg);
#define check(rc) or_fail((rc), c.report_fd)
  // A session leads a process group too: a stop reaches the whole tree either way.
  check(c.controlling_terminal ? ::syscall(SYS_setsid) : ::syscall(SYS_setpgid, 0, 0));
  // A handler would run on corral's memory: every handled signal goes back to its
  // default before any is let through; ignored ones stay ignored, as across exec, but for
  // the three a tool must feel.
  for (int sig = 1; sig < _NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    KernelSigaction old{};
    if (::syscall(SYS_rt_sigaction, sig, nullptr, &old, sizeof old.mask) != 0) continue;
    const bool must_default = sig == SIGINT || sig == SIGTERM || sig == SIGPIPE;
    if (old.handler == SIG_DFL || (old.handler == SIG_IGN && !must_default)) continue;
    KernelSigaction dfl{};
    dfl.handler = SIG_DFL;
    ::syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof dfl.mask);
  }
  const unsigned long none = 0;
  check(::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof none));
  const long in = c.stdin_fd >= 0 ? c.stdin_fd : check(::syscall(SYS_openat, AT_FDCWD, c.stdin_path, O_RDONLY, 0));
  check(raw_dup_to(static_cast<int>(in), 0));
  check(raw_dup_to(c.out_fd, 1));
  check(raw_dup_to(c.err_fd, 2));
  if (in > 2 && in != c.stdin_fd) ::syscall(SYS_close, in);
  if (c.controlling_terminal) check(::syscall(SYS_ioctl, 0, TIOCSCTTY, 0));
  // Namespaces first: a passed descriptor's target number may be a namespace's descriptor.
  if (c.user_ns_fd >= 0) check(::syscall(SYS_setns, c.user_ns_fd, CLONE_NEWUSER));
  if (c.mount_ns_fd >= 0) check(::syscall(SYS_setns, c.mount_ns_fd, CLONE_NEWNS));
  // Passed descriptors move out of the way first, so one's target never overwrites
  // another's source; the copies are close-on-exec like everything else but the targets.
  for (size_t i = 0; i < c.passed_count; ++i)
    c.moved[i] = static_cast<int>(check(::syscall(SYS_fcntl, c.passed[i].fd, F_DUPFD_CLOEXEC, kPassedFdBase)));
  if (::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
    // Kernels before 5.11: one descriptor at a time, up to the limit on their numbers.
    rlimit limit{};
    const long last = ::syscall(SYS_getrlimit, RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                          ? static_cast<long>(limit.rlim_cur)
                          : 1L << 20;
    for (long fd = 3; fd < last; ++fd) {
      const long flags = ::syscall(SYS_fcntl, fd, F_GETFD);
      if (flags >= 0 && !(flags & FD_CLOEXEC)) ::syscall(SYS_fcntl, fd, F_SETFD, flags | FD_CLOEXEC);
    }
  }
  for (size_t i = 0; i < c.passed_count; ++i) check(raw_dup_to(c.moved[i], c.passed[i].as));
  if (c.cwd) or_fail(::syscall(SYS_chdir, c.cwd), c.report_fd, ChildFailure::working_folder);
  const bool drop = c.uid >= 0 || c.gid >= 0;
  if (c.clear_groups || drop) check(::syscall(SYS_setgroups, 0, nullptr));
  // gid first: once the uid is dropped the gid can no longer change.
  if (c.gid >= 0) check(::syscall(SYS_setresgid, c.gid, c.gid, c.gid));
  if (c.uid >= 0) check(::syscall(SYS_setresuid, c.uid, c.uid, c.uid));
  // The kernel set the memory's dumpable flag to fs.suid_dumpable with the new identity:
  // a memory another user's task shares (corral's, with its keys) must never be dumpable,
  // or a process of that user could trace this one and read it.
  if (drop) check(::syscall(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0));
  // After the identity change, which clears it. A SIGKILLed corral cannot stop its tools
  // (a hung `sbx`, git), so the kernel does. It fires when the *thread* that started the
  // child ends: run_process waits on that thread, so the child never outlives its call.
  check(::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0));
  if (::syscall(SYS_getppid) != c.parent) ::syscall(SYS_exit, 127);  // the parent died before the prctl took hold
  ::syscall(SYS_execve, c.program, c.argv, c.env);
  shared_child_fails(c.report_fd, ChildFailure::exec, errno);
#undef check
}

// Starts the child of start_child sharing this process's memory (clone with CLONE_VM and
// CLONE_VFORK, as posix_spawn does): no copy of corral's page tables to make and tear
// down, and no lock on its memory held against its other threads meanwhile. The calling
// thread waits until the child execs or fails. Returns its pid, or -1 with errno. A child
// that changes its uid or gid leaves corral undumpable for good: the flag is the memory's,
// and putting it back could make it dumpable while another thread's child, already of
// another identity, still shares it.
pid_t start_sharing_memory(SharedChild& child) {
  constexpr size_t kStack = 256 << 10;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -1;
  // Blocked until the child has put every handler back to its default.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t pid = ::clone(run_shared_child, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                            &child);
  const int err = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ::munmap(stack, kStack);  // the child has exec'd or ended: CLONE_VFORK waited for it
  errno = err;
  return pid;
}

// Starts `program` with exec, stdout/stderr on the given pipe ends, in its own process
// group (so a stop reaches the whole tree), dying with the calling thread; returns its
// pid or throws. Not posix_spawn: it cannot set a parent-death signal, join a mount
// namespace, drop the supplementary groups or change identity. The child shares corral's
// memory until it execs (start_sharing_memory). An exec failure comes back as its errno
// over a close-on-exec pipe.
pid_t start_child(const ProcessSpec& spec, const std::string& program, int out_fd, int err_fd) {
  auto argv = c_strings(spec.argv);
  const std::vector<std::string> environment = child_environment(spec);
  std::vector<char*> envp = c_strings(environment);
  std::vector<ProcessSpec::PassedFd> passed = checked_passed_fds(spec);
  std::vector<int> moved(passed.size(), -1);
  Pipe report;
  SharedChild child{program.c_str(), argv.data(), envp.data(), spec.stdin_path.c_str(), spec.stdin_fd,
                    spec.cwd.empty() ? nullptr : spec.cwd.c_str(), out_fd, err_fd, report.write.get(), passed.data(),
                    moved.data(), passed.size(), ::getpid(), spec.user_ns_fd, spec.mount_ns_fd, spec.clear_groups,
                    spec.uid, spec.gid, spec.controlling_terminal};
  const pid_t pid = start_sharing_memory(child);
  if (pid < 0) throw Error(ErrorCode::unavailable, "cannot start '" + spec.argv[0] + "': " + std::strerror(errno));
  return finish_start(spec, pid, report);
}

// Kills and reaps the child's group when run_process is left by an exception (a callback
// threw), so no child outlives its call unwaited, to die later with its thread.
class ReapOnThrow {
 public:
  explicit ReapOnThrow(pid_t pid) : pid_(pid) {}
  ReapOnThrow(const ReapOnThrow&) = delete;
  ReapOnThrow& operator=(const ReapOnThrow&) = delete;
  ~ReapOnThrow() {
    if (std::uncaught_exceptions() <= unwinding_) return;
    ::kill(-pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }

 private:
  pid_t pid_;
  int unwinding_ = std::uncaught_exceptions();
};

}  // namespace

std::vector<std::string> baseline_environment() { return command_environment({}); }

std::vector<std::string> command_environment(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> merged = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"HOME", "/tmp"},
      {"LANG", "C.UTF-8"},
      {"CORRAL_SANDBOX", "1"},
  };
  for (const auto& [name, value] : env) merged[name] = value;
  std::vector<std::string> out;
  out.reserve(merged.size());
  for (const auto& [name, value] : merged) out.push_back(name + "=" + value);
  return out;
}

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
                           const std::function<bool()>& cancelled, long timeout_seconds, int grace_seconds,
                           const std::function<void()>& on_tick) {
  if (spec.argv.empty()) throw Error(ErrorCode::internal, "run_process: empty argv");
  std::string program = find_program(spec.argv[0]);
  if (program.empty())
    throw Error(ErrorCode::not_found, "cannot find '" + spec.argv[0] + "' on PATH");

  Pipe out, err;
  pid_t pid = start_child(spec, program, spec.stdout_fd >= 0 ? spec.stdout_fd : out.write.get(), err.write.get());
  ReapOnThrow reap_on_throw(pid);
  out.write.reset();
  err.write.reset();
  int open_streams = 2;
  if (spec.stdout_fd >= 0) {  // the caller reads it, from the other end
    out.read.reset();
    --open_streams;
  }

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
  while (open_streams > 0) {
    pollfd fds[2] = {{out.read.get(), POLLIN, 0}, {err.read.get(), POLLIN, 0}};
    int n = ::poll(fds, 2, 100);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && n > 0; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (got > 0) {
        const OutputFn& sink = i == 0 ? on_stdout : on_stderr;
        if (sink) sink(std::string_view(buffer.data(), static_cast<size_t>(got)));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        (i == 0 ? out : err).read.reset();
        --open_streams;
      }
    }
    if (on_tick) on_tick();
    if (cancelled && cancelled()) stop(false);
    if (timeout_seconds > 0 && Clock::now() - started > std::chrono::seconds(timeout_seconds)) stop(true);
    if (kill_at && Clock::now() > *kill_at) ::kill(-pid, SIGKILL);
    // A second after the group's SIGKILL, what still holds the pipes left the group
    // (setsid) and is beyond reach: stop waiting for it, or a stop would never end.
    if (kill_at && Clock::now() > *kill_at + std::chrono::seconds(1)) break;
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

void spawn_detached(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log,
                    long max_log_bytes) {
  if (argv.empty()) throw Error(ErrorCode::internal, "spawn_detached: empty argv");
  // Everything the children use is made before the fork: they only call what is safe
  // after a fork in a process with threads.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Opened here, never blocking: a FIFO or a symlink planted at the log is refused before
  // any child exists, instead of holding a child (and the descriptors it shares with the
  // caller until its exec, the caller's locks among them) in open() for ever.
  const UniqueFd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const UniqueFd out(
      ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600));
  struct stat st {};
  if (!in.valid() || !out.valid() || ::fstat(out.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string why = !out.valid() ? std::strerror(errno) : "not a regular file";
    throw Error(ErrorCode::internal, "cannot open its log " + log + ": " + why);
  }
  if (st.st_size > max_log_bytes) (void)::ftruncate(out.get(), 0);
  const pid_t child = ::fork();
  if (child < 0) {
    const int err = errno;
    throw errno_error(ErrorCode::internal, "cannot start " + argv[0], err);
  }
  if (child == 0) {
    // The caller's stop handlers and signal mask are not the new process's.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    if (::dup2(in.get(), 0) < 0 || ::dup2(out.get(), 1) < 0 || ::dup2(out.get(), 2) < 0 || ::chdir(cwd.c_str()) != 0)
      ::_exit(127);
    close_on_exec_from(3);
    // On a machine of few cores it must not slow the work of the caller that started it.
    ::setpriority(PRIO_PROCESS, 0, 10);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace corral::os
