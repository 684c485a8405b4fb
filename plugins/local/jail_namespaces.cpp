#include "jail_namespaces.hpp"

#include <fcntl.h>
#include <sched.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "corral/types.hpp"

namespace corral::local {
namespace {

// Writes `text` to /proc/<pid>/<file>; the errno on failure, else 0.
int write_proc(pid_t pid, const char* file, const std::string& text) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + file;
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int rc = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : errno;
  ::close(fd);
  return rc;
}

// Opens /proc/<pid>/ns/<name>; the fd, or -1 with errno set.
int open_ns(pid_t pid, const char* name) {
  std::string path = "/proc/" + std::to_string(pid) + "/ns/" + name;
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

Error refused(const std::string& step, int err) {
  return Error(ErrorCode::unavailable,
               "bubblewrap cannot create a sandbox here: root cannot prepare the jail's namespaces (" + step +
                   "): " + std::strerror(err),
               "root must be able to create user and mount namespaces: in a container allow unshare "
               "(e.g. docker run --security-opt seccomp=unconfined --cap-add SYS_ADMIN, or --privileged), or pick "
               "another provider with --provider");
}

// What the forked child reports: the step that failed (0 = none) and its errno.
struct ChildStatus {
  int step = 0;
  int err = 0;
};
constexpr const char* kSteps[] = {"",
                                  "unshare mount namespace",
                                  "make mounts private",
                                  "bind the workspace",
                                  "unshare user namespace",
                                  "become the jail's user",
                                  "forbid user namespaces inside the jail"};

// Sets the calling process's user namespace's limit on user namespaces nested in it to
// none (what bwrap --disable-userns does for a namespace of its own); errno, else 0.
// The namespace's creator holds CAP_SYS_RESOURCE in it, which the write needs.
int forbid_nested_user_namespaces() {
  int fd = ::open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int rc = ::write(fd, "0", 1) == 1 ? 0 : errno;
  ::close(fd);
  return rc;
}

// Makes the permitted capabilities effective again (a raw syscall: async-signal-safe).
// Failure is ignored: unprivileged namespaces may be allowed anyway.
void raise_permitted_caps() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return;
  for (auto& d : data) d.effective = d.permitted;
  (void)::syscall(SYS_capset, &header, data);
}

// Closes every descriptor from 3 on but `keep_a` and `keep_b` (raw syscalls: async-signal-safe).
// Another thread may fork its own helper at the same time: this child must not hold that
// helper's release pipe, or each would wait for the other's end-of-file forever.
void close_all_but(int keep_a, int keep_b) {
  const unsigned lo = static_cast<unsigned>(std::min(keep_a, keep_b));
  const unsigned hi = static_cast<unsigned>(std::max(keep_a, keep_b));
  auto close_range = [](unsigned first, unsigned last) {
    if (first > last) return;
    if (::syscall(SYS_close_range, first, last, 0) == 0) return;
    for (unsigned fd = first; fd <= last && fd < 65536; ++fd) ::close(static_cast<int>(fd));
  };
  close_range(3, lo - 1);
  close_range(lo + 1, hi - 1);
  close_range(hi + 1, ~0U);
}

// The child: a private mount namespace with the workspace bound at the mount point, then
// a fresh user namespace in which none can be nested; reports, then waits until the parent
// has mapped and opened them.
// Only async-signal-safe calls: the parent may be multi-threaded.
[[noreturn]] void prepare_child(const JailUser& user, const char* workspace_source, const int ready[2],
                                const int release[2]) {
  // The parent's ends: holding release's write end would keep the read below from ever ending.
  ::close(ready[0]);
  ::close(release[1]);
  int ready_fd = ready[1], release_fd = release[0];
  close_all_but(ready_fd, release_fd);
  ChildStatus status;
  if (workspace_source) {
    if (::unshare(CLONE_NEWNS) != 0) status = {1, errno};
    // Slave, so the bind below never propagates back to the host's mount table.
    else if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) status = {2, errno};
    else if (::mount(workspace_source, workspace_mount_point(), nullptr, MS_BIND, nullptr) != 0) status = {3, errno};
  }
  // The user namespace is made with the jail's uid as effective uid, which makes that user
  // its owner: bwrap, started as that user, may then join it, and bwrap's processes all
  // share one identity (so --die-with-parent's signal is allowed to reach the jail).
  // Root's capabilities are raised again, so hosts that restrict unprivileged user
  // namespaces (a sysctl, AppArmor) still let root make it.
  if (status.step == 0) {
    if (::setresuid(-1, user.uid, -1) != 0) status = {5, errno};
    else {
      raise_permitted_caps();
      if (::unshare(CLONE_NEWUSER) != 0) status = {4, errno};
      else if (int err = forbid_nested_user_namespaces()) status = {6, err};
    }
  }
  (void)!::write(ready_fd, &status, sizeof status);
  char c;
  (void)!::read(release_fd, &c, 1);  // EOF once the parent is done, or gone
  ::_exit(0);
}

}  // namespace

const char* workspace_mount_point() {
  // /mnt is meant for temporary mounts; a host without one still has /tmp, which the
  // jail replaces with its own tmpfs anyway.
  struct stat st {};
  static const char* point = ::stat("/mnt", &st) == 0 && S_ISDIR(st.st_mode) ? "/mnt" : "/tmp";
  return point;
}

JailNamespaces JailNamespaces::create(const JailUser& user, const std::string& workspace) {
  // A child makes the namespaces and waits; the parent (root in the parent namespace,
  // hence allowed to map any uid) writes the maps and keeps fds that hold them alive.
  // By path, not by an fd: a mount of the old namespace cannot be bound in the new one.
  // Root-owned 0700 folders lead to it, so the jail's user cannot swap it for a link.
  const std::string& source = workspace;
  workspace_mount_point();  // decided before the fork: its static init is not async-signal-safe
  int ready[2], release[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) throw refused("pipe", errno);
  if (::pipe2(release, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(ready[0]);
    ::close(ready[1]);
    throw refused("pipe", e);
  }
  pid_t pid = ::fork();
  if (pid == 0) prepare_child(user, source.empty() ? nullptr : source.c_str(), ready, release);
  int fork_errno = errno;
  ::close(ready[1]);
  ::close(release[0]);
  int userns = -1, mountns = -1;
  auto finish = [&] {
    ::close(release[1]);
    ::close(ready[0]);
    int status;
    if (pid > 0)
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
  };
  auto fail = [&](const std::string& step, int err) {
    finish();
    if (userns >= 0) ::close(userns);
    if (mountns >= 0) ::close(mountns);
    return refused(step, err);
  };
  if (pid < 0) throw fail("fork", fork_errno);
  ChildStatus child;
  ssize_t got;
  do got = ::read(ready[0], &child, sizeof child);
  while (got < 0 && errno == EINTR);
  if (got != sizeof child) throw fail("helper process", EIO);
  if (child.step != 0) throw fail(kSteps[child.step], child.err);

  const std::string uid = std::to_string(user.uid), gid = std::to_string(user.gid);
  if ((userns = open_ns(pid, "user")) < 0) throw fail("open user namespace", errno);
  if (!source.empty() && (mountns = open_ns(pid, "mnt")) < 0) throw fail("open mount namespace", errno);
  // setgroups deny: nothing in the jail can ever drop its group to get past a deny ACL.
  if (int err = write_proc(pid, "setgroups", "deny")) throw fail("setgroups", err);
  if (int err = write_proc(pid, "uid_map", uid + " " + uid + " 1\n")) throw fail("uid_map", err);
  if (int err = write_proc(pid, "gid_map", gid + " " + gid + " 1\n")) throw fail("gid_map", err);
  finish();
  return JailNamespaces(userns, mountns);
}

JailNamespaces::JailNamespaces(JailNamespaces&& other) noexcept
    : userns_fd_(other.userns_fd_), mountns_fd_(other.mountns_fd_) {
  other.userns_fd_ = other.mountns_fd_ = -1;
}

JailNamespaces::~JailNamespaces() {
  if (userns_fd_ >= 0) ::close(userns_fd_);
  if (mountns_fd_ >= 0) ::close(mountns_fd_);
}

}  // namespace corral::local
