#include "pod_process.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tuple>
#include <utility>

#include "corral/os/process.hpp"

namespace corral::kubernetes::standin {
namespace fs = std::filesystem;
namespace {

// The folders of this machine a pod sees read-only: the image, in effect.
const std::vector<std::string> kSystemDirs = {"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};

// containerd's default capabilities for a container's root (what a pod running as root
// may do: chown the files it unpacks, ...).
const std::vector<std::string> kContainerCaps = {
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID",   "CAP_FOWNER",     "CAP_MKNOD",
    "CAP_NET_RAW", "CAP_SETGID",     "CAP_SETUID",   "CAP_SETFCAP",    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"};

const char* kPodPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The host path a path in the pod names (system folders are the host's, the rest the pod's).
fs::path host_path(const fs::path& root, const std::string& in_pod) {
  for (const auto& dir : kSystemDirs)
    if (in_pod == dir || in_pod.rfind(dir + "/", 0) == 0) return in_pod;
  return root / fs::path(in_pod).relative_path();
}

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

void close_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
#endif
  for (int fd = first; fd < 65536; ++fd) ::close(fd);
}

// A pseudo-terminal for a command run with tty: its master (the stand-in's end) and the
// slave's name; throws StartError when none can be had.
std::pair<int, std::string> open_terminal() {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  char name[64];
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 || ::ptsname_r(master, name, sizeof name) != 0) {
    const int e = errno;
    if (master >= 0) ::close(master);
    throw StartError("cannot allocate a terminal: " + std::string(strerror(e)));
  }
  return {master, name};
}

}  // namespace

void prepare_pod_root(const fs::path& root, const std::string& working_dir) {
  for (const char* dir : {"usr", "etc", "proc", "dev", "tmp", "root"}) fs::create_directories(root / dir);
  fs::permissions(root / "tmp", fs::perms::all | fs::perms::sticky_bit);
  for (const auto& dir : kSystemDirs) {
    std::error_code ec;
    auto status = fs::symlink_status(dir, ec);
    if (ec || !fs::exists(status)) continue;
    const fs::path in_root = root / fs::path(dir).relative_path();
    if (fs::is_symlink(status)) {
      if (!fs::is_symlink(fs::symlink_status(in_root, ec))) fs::create_symlink(fs::read_symlink(dir), in_root);
    } else {
      fs::create_directories(in_root);
    }
  }
  fs::create_directories(host_path(root, working_dir.empty() ? "/" : working_dir));
}

std::optional<std::string> find_in_pod(const fs::path& root, const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (program[0] == '/' && executable(host_path(root, program))) return program;
    return std::nullopt;
  }
  std::string path = kPodPath;
  for (size_t at = 0; at <= path.size();) {
    size_t colon = path.find(':', at);
    if (colon == std::string::npos) colon = path.size();
    const std::string candidate = path.substr(at, colon - at) + "/" + program;
    if (executable(host_path(root, candidate))) return candidate;
    at = colon + 1;
  }
  return std::nullopt;
}

Spawner::Spawner() {
  bwrap_ = os::find_program("bwrap");
  if (bwrap_.empty()) {
    unavailable_ = "bwrap (bubblewrap) is not installed: the stand-in runs a pod's commands with it";
  } else {
    os::ProcessSpec probe;
    probe.argv = {bwrap_, "--dev-bind", "/", "/", "--unshare-net", "--unshare-ipc"};
    if (geteuid() != 0) probe.argv.push_back("--unshare-user");
    probe.argv.insert(probe.argv.end(), {"--", "true"});
    auto r = os::capture_process(probe, 30);
    if (r.exit_code != 0) unavailable_ = "bwrap cannot make a sandbox here: " + r.err;
  }
  thread_ = std::thread([this] { loop(); });
}

Spawner::~Spawner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Spawner::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

StartedProcess Spawner::start(const ProcessSpec& spec) {
  if (unavailable_) throw StartError(*unavailable_);
  auto task = std::make_shared<std::packaged_task<StartedProcess()>>([this, spec] { return fork_exec(spec); });
  auto result = task->get_future();
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw StartError("the stand-in is stopping");
    jobs_.emplace_back([task] { (*task)(); });
  }
  wake_.notify_one();
  return result.get();
}

StartedProcess Spawner::fork_exec(const ProcessSpec& spec) {
  std::vector<std::string> args = {bwrap_, "--die-with-parent", "--unshare-ipc", "--unshare-uts", "--hostname",
                                   spec.hostname};
  if (geteuid() == 0) {
    for (const auto& cap : kContainerCaps) args.insert(args.end(), {"--cap-add", cap});
  } else {
    args.push_back("--unshare-user");
  }
  if (spec.no_network) args.push_back("--unshare-net");
  args.insert(args.end(), {"--bind", spec.root.string(), "/"});
  for (const auto& dir : kSystemDirs) {
    std::error_code ec;
    auto status = fs::symlink_status(dir, ec);
    if (!ec && fs::is_directory(status) && !fs::is_symlink(status)) args.insert(args.end(), {"--ro-bind", dir, dir});
  }
  args.insert(args.end(), {"--proc", "/proc", "--dev", "/dev"});
  int master = -1;
  std::string terminal;
  if (spec.tty) {
    // The command's terminal is /dev/pts/N in the pod, as runc's console is, and the only
    // one there: the host's other terminals stay out of the pod's sight.
    const auto setsid = find_in_pod(spec.root, "setsid");
    if (!setsid) throw StartError("the stand-in gives a command its terminal with util-linux's setsid, which is not installed");
    std::tie(master, terminal) = open_terminal();
    args.insert(args.end(), {"--tmpfs", "/dev/pts", "--dev-bind", terminal, terminal});
    args.insert(args.end(), {"--chdir", spec.working_dir.empty() ? "/" : spec.working_dir, "--"});
    // Inside the sandbox, where bwrap's own process is not: the command leads a session of
    // its own whose controlling terminal that is (setsid(), then TIOCSCTTY), as runc's init
    // makes an exec's process, so only the command's jobs get the terminal's signals.
    args.insert(args.end(), {*setsid, "--ctty", "--wait"});
  } else {
    args.insert(args.end(), {"--chdir", spec.working_dir.empty() ? "/" : spec.working_dir, "--"});
  }
  args.insert(args.end(), spec.argv.begin(), spec.argv.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = spec.env;
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, status[2];
  int log = -1;
  if (spec.tty) {
    // One terminal is the command's stdin, stdout and stderr: the slave for it, the master
    // (and a copy of it for the input) for the stand-in.
    out[1] = err[1] = in[0] = ::open(terminal.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    out[0] = master;
    in[1] = ::fcntl(master, F_DUPFD_CLOEXEC, 0);
    if (in[0] < 0 || in[1] < 0) {
      const int e = errno;
      for (int fd : {in[0], in[1], master})
        if (fd >= 0) ::close(fd);
      throw StartError("cannot open the terminal " + terminal + ": " + strerror(e));
    }
  } else if (!spec.log.empty()) {
    log = ::open(spec.log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (log < 0) throw StartError("cannot open the container log: " + std::string(strerror(errno)));
  }
  if ((spec.with_stdin && !spec.tty && pipe2(in, O_CLOEXEC) != 0) ||
      (log < 0 && !spec.tty && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)) ||
      pipe2(status, O_CLOEXEC) != 0)
    throw StartError(std::string("pipe: ") + strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) throw StartError(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // A container's processes start with every signal's default action, as runc starts
    // them, whatever the stand-in's own (a test run from a shell's background job has
    // SIGINT ignored, which a command could then not trap).
    for (int s = 1; s < NSIG; ++s) signal(s, SIG_DFL);
    dup2(spec.with_stdin || spec.tty ? in[0] : open("/dev/null", O_RDONLY), 0);
    dup2(log >= 0 ? log : out[1], 1);
    dup2(log >= 0 ? log : err[1], 2);
    const int report = status[1];
    dup2(report, 3);
    close_from(4);
    fcntl(3, F_SETFD, FD_CLOEXEC);
    execve(argv[0], argv.data(), envp.data());
    int e = errno;
    (void)!write(3, &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);
  for (int fd : {in[0], spec.tty ? -1 : out[1], spec.tty ? -1 : err[1], status[1], log})  // with tty all three are one
    if (fd >= 0) ::close(fd);
  int child_errno = 0;
  const ssize_t n = ::read(status[0], &child_errno, sizeof child_errno);
  ::close(status[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    for (int fd : {in[1], out[0], err[0]})
      if (fd >= 0) ::close(fd);
    wait_exit_code(pid);
    throw StartError("cannot run bwrap: " + std::string(strerror(child_errno)));
  }
  return {pid, in[1], out[0], err[0]};
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

}  // namespace corral::kubernetes::standin
