#include "jail_process.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "corral/os/errno_error.hpp"
#include "corral/os/read_file.hpp"
#include "corral/os/unique_fd.hpp"
#include "egress_proxy.hpp"
#include "jail_exec_file.hpp"
#include "jail_namespaces.hpp"

namespace corral::local {
namespace {

// Appends what `fd` (non-blocking) holds now to `text`.
void read_available(int fd, std::string& text) {
  char buffer[4096];
  for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (got > 0) text.append(buffer, static_cast<size_t>(got));
    else if (errno != EINTR) break;
  }
}

// Everything written to `pipe` once every writer is gone (its write end closed here),
// after what `text` already holds of it.
std::string drain(os::Pipe& pipe, std::string text = {}) {
  pipe.write.reset();
  ::fcntl(pipe.read.get(), F_SETFL, O_NONBLOCK);  // a stray writer must not hang us
  char buffer[4096];
  for (ssize_t got; (got = ::read(pipe.read.get(), buffer, sizeof buffer)) != 0;) {
    if (got > 0) text.append(buffer, static_cast<size_t>(got));
    else if (errno != EINTR) break;
  }
  return text;
}

// Passes the user's signals on to the jailed command, as a terminal passes Ctrl-C to its
// foreground process group. bwrap reports the pid of the jail's first process (its pid 1,
// which ignores what it has no handler for) on the status pipe: that process made the
// jail's session (--new-session), so its group is the command and all it started but what
// left the group itself.
//
// A command on a terminal has a session of its own (corral-jail-exec): the signal goes to
// the terminal's foreground job, as the terminal's own keys would send it.
class SignalRelay {
 public:
  SignalRelay(int status_fd, const JailIo& io) : fd_(status_fd), io_(io) {}
  // Called at each tick of the run: passes on a signal asked for, once the jail is known.
  void tick() {
    if (io_.on_tick) io_.on_tick();
    if (!io_.take_signal) return;
    if (pending_ == 0) pending_ = io_.take_signal();
    if (pending_ == 0) return;
    // The kernel signals the terminal's foreground job itself: no pid leaves it, so none
    // that was reused meanwhile can be hit.
    if (io_.terminal >= 0 && ::ioctl(io_.terminal, TIOCSIG, pending_) == 0) {
      pending_ = 0;
      return;
    }
    if (jail_pid_ <= 0) find_jail();
    if (jail_pid_ <= 0) return;  // not started yet: at the next tick
    ::kill(-jail_pid_, pending_);
    pending_ = 0;
  }
  // What was read of the status pipe so far.
  std::string& status() { return status_; }

 private:
  void find_jail() {
    ::fcntl(fd_, F_SETFL, O_NONBLOCK);
    read_available(fd_, status_);
    static constexpr std::string_view kKey = "\"child-pid\":";
    const size_t at = status_.find(kKey);
    if (at == std::string::npos) return;
    // Digits up to a separator, and above 1: never 0 or -1, whose groups are everybody's.
    const char* digits = status_.c_str() + at + kKey.size();
    while (*digits == ' ') ++digits;
    char* end = nullptr;
    const long pid = std::strtol(digits, &end, 10);
    if (end == digits || (*end != ',' && *end != ' ' && *end != '}') || pid <= 1 || pid > (1L << 22)) return;
    jail_pid_ = static_cast<pid_t>(pid);
  }

  int fd_;
  const JailIo& io_;
  int pending_ = 0;
  pid_t jail_pid_ = 0;
  std::string status_;
};

// Holds back stderr while it could still be bwrap's own one-line complaint (bwrap prints
// nothing else before the command runs), so a jail that fails to start is reported once,
// as corral's error, not also as the command's output.
class StderrGate {
 public:
  explicit StderrGate(const os::OutputFn& sink) : sink_(sink) {}
  void operator()(std::string_view data) {
    if (open_) return emit(data);
    held_.append(data);
    static constexpr std::string_view kPrefix = "bwrap: ";
    bool maybe_bwrap = held_.compare(0, kPrefix.size(), kPrefix.substr(0, std::min(held_.size(), kPrefix.size()))) == 0;
    if (!maybe_bwrap || held_.size() > 4096) release();
  }
  // Passes on what was held and everything after it.
  void release() {
    open_ = true;
    if (!held_.empty()) emit(held_);
    held_.clear();
  }
  const std::string& held() const { return held_; }

 private:
  void emit(std::string_view data) {
    if (sink_) sink_(data);
  }
  const os::OutputFn& sink_;
  std::string held_;
  bool open_ = false;
};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.rfind("bwrap: ", 0) == 0) s.erase(0, 7);
  return s;
}

// What to do when bwrap could not make the jail.
std::string namespace_hint(const std::string& bwrap_error, bool as_root) {
  if (bwrap_error.find("--disable-userns") != std::string::npos)
    return "this bubblewrap is older than 0.8, which corral needs so that a command cannot make user namespaces "
           "of its own (--disable-userns): install bubblewrap 0.8 or newer (Debian 12, Ubuntu 24.04), or set "
           "CORRAL_BWRAP to one";
  if (as_root)
    return "as root, corral maps the jail to an unprivileged user in its own user namespace: check that "
           "user.max_user_namespaces is above 0 and, in a container, that unshare is allowed; "
           "`corral doctor --provider local` checks this";
  if (bwrap_error.find("ermission") != std::string::npos || bwrap_error.find("namespace") != std::string::npos)
    return "unprivileged user namespaces look disabled: enable them with `sysctl -w kernel.unprivileged_userns_clone=1` "
           "(Debian) or `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 24.04+), or pick another "
           "provider with --provider";
  return "run `corral doctor --provider local` for details";
}

// The system's CA certificates (the first bundle found) followed by `egress_ca`, in a
// sealed memory file read from its start: what TLS clients in the jail trust.
os::UniqueFd ca_bundle_file(const std::string& egress_ca) {
  std::string bundle;
  for (const char* path : {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"})
    if (std::optional<std::string> text = os::read_regular_file(path, 16 << 20, "the system's CA bundle")) {
      bundle = std::move(*text);
      break;
    }
  if (!bundle.empty() && bundle.back() != '\n') bundle += '\n';
  bundle += egress_ca;
  os::UniqueFd fd(::memfd_create("corral-ca-bundle", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) throw os::errno_error(ErrorCode::internal, "cannot make the jail's CA bundle", errno);
  for (std::string_view rest = bundle; !rest.empty();) {
    const ssize_t n = ::write(fd.get(), rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw os::errno_error(ErrorCode::internal, "cannot write the jail's CA bundle", errno);
    rest.remove_prefix(static_cast<size_t>(n));
  }
  ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  ::lseek(fd.get(), 0, SEEK_SET);
  return fd;
}

// Points the TLS clients of the jail (OpenSSL's, Python's requests, Node, curl, git) at
// the bundle, whatever the command's own environment said.
void point_at_ca_bundle(std::vector<std::string>& env) {
  for (const char* name : kCaBundleVariables) {
    const std::string prefix = std::string(name) + "=";
    std::erase_if(env, [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
    env.push_back(prefix + kJailCaBundle);
  }
}

}  // namespace

os::ProcessOutcome run_jailed(JailSpec jail, const JailWorkspace& workspace, const std::optional<JailUser>& as_user,
                               const Command& command, const os::OutputFn& on_stdout, const os::OutputFn& on_stderr,
                               const std::function<bool()>& cancelled, long timeout_seconds,
                               EgressReport* egress, const JailIo& io) {
  os::Pipe status;
  os::ProcessSpec spec;
  spec.stdin_fd = io.stdin_fd;
  jail.report_status = true;
  const os::UniqueFd starter = open_jail_exec(as_user, jail.starter_verified);
  spec.pass_fds = {{status.write.get(), kJailStatusFd}, {starter.get(), kJailExecFd}};
  // --network allow:: the starter hands its loopback listener to the proxy over this pair.
  std::optional<EgressProxy> proxy;
  os::UniqueFd egress_end, ca_bundle;
  if (!jail.egress.empty()) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      throw os::errno_error(ErrorCode::internal, "cannot make the egress proxy's channel", errno);
    egress_end = os::UniqueFd(pair[0]);
    std::shared_ptr<EgressInterceptor> secrets;
    if (!jail.secrets.empty()) {
      secrets = EgressInterceptor::load(egress_tls_module_path(), jail.secrets, jail.egress_ca_file);
      ca_bundle = ca_bundle_file(secrets->ca_pem());
      spec.pass_fds.push_back({ca_bundle.get(), kJailCaFd});
      jail.ca_bundle = true;
    }
    proxy.emplace(EgressPolicy(jail.egress, resolve_with_system), os::UniqueFd(pair[1]), std::move(secrets));
    spec.pass_fds.push_back({egress_end.get(), kJailEgressFd});
    jail.network = false;
  }
  jail.workspace_dir = workspace.folder;
  jail.tmp_dir = workspace.tmp_folder;
  std::optional<JailNamespaces> made;
  const JailNamespaces* namespaces = workspace.in_memory.get();
  if (!namespaces && as_user)
    namespaces = &made.emplace(JailNamespaces::create(*as_user, workspace.folder, workspace.tmp_folder));
  if (workspace.in_memory) jail.workspace_dir = workspace_mount_point();
  if (namespaces && !namespaces->jail_joins_userns()) {
    // The caller's own user namespace, which owns the tmpfs's mount namespace: bwrap's
    // spawner joins both, and bwrap makes the jail's user namespace inside.
    spec.user_ns_fd = namespaces->userns_fd();
    spec.mount_ns_fd = namespaces->mountns_fd();
  } else if (namespaces) {
    jail.join_userns = true;
    spec.pass_fds.push_back({namespaces->userns_fd(), kJailUsernsFd});
    jail.user = *as_user;
    if (!jail.workspace_dir.empty())
      jail.workspace_dir = jail.tmp_dir.empty() ? workspace_mount_point() : kept_workspace_point();
    if (!jail.tmp_dir.empty()) jail.tmp_dir = kept_tmp_point();
    spec.mount_ns_fd = namespaces->mountns_fd();
    // bwrap itself runs as the jail's user, without root's groups: it owns the namespace,
    // so it may join it, and no process of the jail is ever the host's root.
    spec.uid = as_user->uid;
    spec.gid = as_user->gid;
    spec.clear_groups = true;
  }
  spec.argv = jail_argv(jail, command);
  spec.env = jail_env(command);
  if (jail.ca_bundle) point_at_ca_bundle(*spec.env);
  StderrGate gate(on_stderr);
  SignalRelay signals(status.read.get(), io);
  os::ProcessOutcome outcome = os::run_process(
      spec, on_stdout, [&](std::string_view d) { gate(d); }, cancelled, timeout_seconds, 3, [&] { signals.tick(); });
  // bwrap writes {"exit-code": N} only when the command was really executed.
  bool started = drain(status, std::move(signals.status())).find("\"exit-code\"") != std::string::npos;
  bool exec_failed = gate.held().find("bwrap: execvp ") != std::string::npos;
  if (proxy && egress) *egress = proxy->report();
  if (started || exec_failed || outcome.cancelled || outcome.timed_out || outcome.exit_code == 0) {
    gate.release();
    return outcome;
  }
  std::string why = trim(gate.held());
  throw Error(ErrorCode::unavailable, "bubblewrap cannot create a sandbox here: " + (why.empty() ? "it exited with status " + std::to_string(outcome.exit_code) : why),
              namespace_hint(why, as_user.has_value()));
}

}  // namespace corral::local
