#include "state.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "private_network.hpp"

namespace corral::daytona::standin {

namespace fs = std::filesystem;

InputPipe::~InputPipe() { ::close(fd); }

std::string rfc3339(Clock::time_point t) { return test::utc_seconds(t) + ".000Z"; }

std::string random_id(size_t length) { return test::random_text(length, "abcdef0123456789"); }

FakeSandbox& State::add_sandbox() {
  FakeSandbox sb;
  sb.id = random_id(8) + "-" + random_id(4) + "-" + random_id(4) + "-" + random_id(4) + "-" + random_id(12);
  sb.name = sb.id;
  sb.created_at = Clock::now();
  sb.ready_at = sb.created_at + std::chrono::milliseconds(faults.start_delay_ms);
  if (!faults.fail_state.empty()) sb.settles_to = faults.fail_state;
  sb.root = root_ / sb.id;
  fs::create_directories(home_of(sb));
  fs::create_directories(sb.root / "tmp");
  return sandboxes[sb.id] = std::move(sb);
}

void State::settle(FakeSandbox& sb) {
  if (Clock::now() < sb.ready_at) return;
  if (sb.state == "creating" || sb.state == "starting" || sb.state == "resuming") {
    if (sb.state == "resuming") freeze_processes(sb, false);
    sb.state = sb.settles_to;
    if (sb.state != "started") sb.error_reason = "the stand-in was told to fail this sandbox (" + sb.state + ")";
  } else if (sb.state == "pausing") {
    sb.state = "paused";
  } else if (sb.state == "stopping") {
    sb.state = "stopped";
  }
}

void State::begin(FakeSandbox& sb, const std::string& passing) {
  sb.state = passing;
  sb.ready_at = Clock::now() + std::chrono::milliseconds(faults.start_delay_ms);
}

FakeSandbox& State::fork_sandbox(const FakeSandbox& source, const std::string& name) {
  FakeSandbox& fork = add_sandbox();
  const std::string id = fork.id;
  const fs::path root = fork.root;
  const Clock::time_point created = fork.created_at, ready = fork.ready_at;
  const std::string settles_to = fork.settles_to;
  fork = source;
  fork.id = id;
  fork.name = name.empty() ? id : name;
  fork.root = root;
  fork.parent = source.id;
  fork.created_at = created;
  fork.ready_at = ready;
  fork.settles_to = settles_to;
  fork.state = "creating";
  fork.error_reason.clear();
  fork.sessions.clear();  // a copy of the disk: no process runs in the fork
  fs::remove_all(root);
  fs::copy(source.root, root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(root / ".daytona");  // the source's session logs are not the fork's
  return fork;
}

bool State::take_quota(const std::string& route) {
  if (faults.quota_message.empty() || faults.quota_route != route) return false;
  if (faults.quota_skip > 0) {
    --faults.quota_skip;
    return false;
  }
  return true;
}

bool State::take_rate_limit(const std::string& route) {
  if (faults.rate_limit_route != route || faults.rate_limit_count <= 0) return false;
  --faults.rate_limit_count;
  return true;
}

bool State::take_vanish(const std::string& route) {
  if (route.empty() || faults.vanish_route != route) return false;
  if (faults.vanish_skip > 0) {
    --faults.vanish_skip;
    return false;
  }
  faults.vanish_route.clear();
  return true;
}

int State::take_failure(const std::string& route) {
  if (route.empty() || faults.fail_route != route || faults.fail_times <= 0) return 0;
  if (faults.fail_skip > 0) {
    --faults.fail_skip;
    return 0;
  }
  --faults.fail_times;
  return faults.fail_status;
}

void State::hold_while_asked(const std::string& route, std::unique_lock<std::mutex>& lock) {
  if (route.empty()) return;
  if (faults.hold_route == route && faults.hold_skip > 0) {
    --faults.hold_skip;
    return;
  }
  while (faults.hold_route == route && !stopping) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    lock.lock();
  }
}

void State::delay_if_slow(const std::string& route, std::unique_lock<std::mutex>& lock) {
  if (route.empty() || faults.slow_route != route) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(faults.slow_ms);
  lock.unlock();
  while (std::chrono::steady_clock::now() < until && !stopping)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  lock.lock();
}

void State::stop_processes(FakeSandbox& sb) {
  for (auto& [sid, session] : sb.sessions)
    for (auto& [cid, cmd] : session.commands)
      if (!cmd->exit_code && cmd->pid > 0) ::kill(-cmd->pid, SIGKILL);
  sb.sessions.clear();
}

void State::freeze_processes(FakeSandbox& sb, bool frozen) {
  for (auto& [sid, session] : sb.sessions)
    for (auto& [cid, cmd] : session.commands)
      if (!cmd->exit_code && cmd->pid > 0) ::kill(-cmd->pid, frozen ? SIGSTOP : SIGCONT);
}

void State::remove(const std::string& id) {
  auto it = sandboxes.find(id);
  if (it == sandboxes.end()) return;
  stop_processes(it->second);
  std::error_code ec;
  fs::remove_all(it->second.root, ec);
  sandboxes.erase(it);
}

namespace {

// Copies `fd` into the log line by line, each line prefixed, as the real daemon does: its
// session command wrapper (apps/daemon/pkg/session/execute.go, cmdWrapperFormat) runs
//   while IFS= read -r line || [ -n "$line" ]; do printf '\001\001\001%s\n' "$line"; done
// per stream in the session's shell. So a line reaches the log only once complete, a last
// partial line gets a newline, NUL bytes are dropped (a shell's `read` skips them) and
// every other byte is copied as is: output holding 01 01 01 or 02 02 02 is then
// indistinguishable from a prefix. Lossy on purpose: corral's wrapper must cope.
void pump(int fd, const char* prefix, const fs::path& log) {
  int out = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  std::string pending;
  char buf[65536];
  auto write_line = [&](std::string_view line) {
    std::string record = std::string(prefix, 3);
    for (char c : line)
      if (c != '\0') record += c;  // NUL bytes do not survive a shell read loop
    record += '\n';
    (void)!::write(out, record.data(), record.size());
  };
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t start = 0, nl;
    while ((nl = pending.find('\n', start)) != std::string::npos) {
      write_line(std::string_view(pending).substr(start, nl - start));
      start = nl + 1;
    }
    pending.erase(0, start);
  }
  if (!pending.empty()) write_line(pending);
  ::close(out);
  ::close(fd);
}

}  // namespace

std::shared_ptr<FakeCommand> State::start_command(FakeSandbox& sb, FakeSession& session, const std::string& command) {
  auto cmd = std::make_shared<FakeCommand>();
  cmd->id = random_id(8) + "-" + random_id(4) + "-" + random_id(4) + "-" + random_id(4) + "-" + random_id(12);
  cmd->command = command;
  fs::create_directories(sb.root / ".daytona" / "sessions" / session.id);
  cmd->log = sb.root / ".daytona" / "sessions" / session.id / (cmd->id + ".log");
  { int fd = ::open(cmd->log.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600); if (fd >= 0) ::close(fd); }
  const std::string home = home_of(sb).string();
  std::vector<std::string> env_s = {"HOME=" + home, "USER=" + sb.user, "PATH=" + std::string(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin")};
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string sh = "/bin/sh", dash_c = "-c", text = command;
  char* argv[] = {sh.data(), dash_c.data(), text.data(), nullptr};
  // An allow list is enforced as the stand-in can: it names this machine's loopback (the
  // one address tests reach), or the command gets no network at all.
  std::vector<std::string> allowed;
  for (size_t at = 0; at < sb.network_allow_list.size();) {
    const size_t comma = std::min(sb.network_allow_list.find(',', at), sb.network_allow_list.size());
    allowed.push_back(sb.network_allow_list.substr(at, comma - at));
    at = comma + 1;
  }
  const bool no_network = sb.network_block_all || (!allowed.empty() && !test::allows_loopback(allowed));
  const test::PrivateNetwork network = test::prepare_private_network();
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  ::fcntl(in[1], F_SETFL, O_NONBLOCK);  // the input call waits in poll, never in write
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setpgid(0, 0);  // the session's commands form a group, so deleting the session ends them all
    // A stand-in started from a shell's background job has SIGINT ignored, and its threads
    // block signals: the command starts as the daemon's would, every signal at its default.
    for (int signal = 1; signal < NSIG; ++signal) ::signal(signal, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    // A sandbox with networkBlockAll runs its commands in a network namespace of their
    // own; one that cannot be made fails the command rather than running it networked.
    if (no_network && test::enter_private_network(network) != 0) {
      static const char message[] = "stand-in: cannot make a network namespace for networkBlockAll\n";
      (void)!write(2, message, sizeof message - 1);
      _exit(126);
    }
    if (chdir(home.c_str()) != 0) _exit(127);
    execve(argv[0], argv, envp.data());
    _exit(127);
  }
  setpgid(pid, pid);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  cmd->pid = pid;
  cmd->input = std::make_shared<InputPipe>(in[1]);
  session.commands[cmd->id] = cmd;
  const int out_fd = out[0], err_fd = err[0];
  workers.start([this, cmd, out_fd, err_fd] {
    auto drained = std::make_shared<std::atomic<int>>(0);
    std::thread a([=] { pump(out_fd, "\x01\x01\x01", cmd->log); ++*drained; });
    std::thread b([=] { pump(err_fd, "\x02\x02\x02", cmd->log); ++*drained; });
    int status = 0;
    while (waitpid(cmd->pid, &status, 0) < 0 && errno == EINTR) {
    }
    // Give the copy loops a moment to take the last output (children may hold the pipes).
    for (int i = 0; i < 50 && *drained < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    {
      std::lock_guard lock(mutex());
      cmd->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      cmd->input.reset();  // an input call still writing holds its own reference
    }
    a.join();
    b.join();
  });
  return cmd;
}

}  // namespace corral::daytona::standin
