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
                                  "forbid user namespaces inside the jail",
                                  "unshare a user namespace of one's own",
                                  "mount the workspace's tmpfs"};

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

// What the child makes: the workspace at the mount point (a bind of `bind_source`, a
// tmpfs with `tmpfs_options`, or nothing), then the jail's user namespace for `user`
// (corral is root), or, with `self_userns`, first a user namespace of the caller's own
// in which the mount namespace is made.
struct ChildPlan {
  JailUser user = kNobody;
  const char* bind_source = nullptr;
  const char* tmpfs_options = nullptr;
  bool self_userns = false;
};

// The child: the plan's namespaces; reports, then waits until the parent has mapped and
// opened them.
// Only async-signal-safe calls: the parent may be multi-threaded.
[[noreturn]] void prepare_child(const ChildPlan& plan, const int ready[2], const int release[2]) {
  // The parent's ends: holding release's write end would keep the read below from ever ending.
  ::close(ready[0]);
  ::close(release[1]);
  int ready_fd = ready[1], release_fd = release[0];
  close_all_but(ready_fd, release_fd);
  ChildStatus status;
  if (plan.self_userns && ::unshare(CLONE_NEWUSER) != 0) status = {7, errno};
  if (status.step == 0 && (plan.bind_source || plan.tmpfs_options)) {
    if (::unshare(CLONE_NEWNS) != 0) status = {1, errno};
    // Slave, so the mount below never propagates back to the host's mount table.
    else if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) status = {2, errno};
    else if (plan.bind_source && ::mount(plan.bind_source, workspace_mount_point(), nullptr, MS_BIND, nullptr) != 0)
      status = {3, errno};
    else if (plan.tmpfs_options && ::mount("tmpfs", workspace_mount_point(), "tmpfs", MS_NOSUID | MS_NODEV,
                                           plan.tmpfs_options) != 0)
      status = {8, errno};
  }
  // The user namespace is made with the jail's uid as effective uid, which makes that user
  // its owner: bwrap, started as that user, may then join it, and bwrap's processes all
  // share one identity (so --die-with-parent's signal is allowed to reach the jail).
  // Root's capabilities are raised again, so hosts that restrict unprivileged user
  // namespaces (a sysctl, AppArmor) still let root make it.
  if (status.step == 0 && !plan.self_userns) {
    if (::setresuid(-1, plan.user.uid, -1) != 0) status = {5, errno};
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

// Runs prepare_child(plan) and, while it waits, maps its user namespace to `plan.user` alone
// and opens what `opened` names: the user namespace, the mount namespace (with a workspace)
// and the workspace's root (with a tmpfs).
JailNamespaces::Opened prepare(const ChildPlan& plan) {
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
  if (pid == 0) prepare_child(plan, ready, release);
  int fork_errno = errno;
  ::close(ready[1]);
  ::close(release[0]);
  JailNamespaces::Opened opened;
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
    for (int fd : {opened.userns, opened.mountns, opened.workspace})
      if (fd >= 0) ::close(fd);
    return refused(step, err);
  };
  if (pid < 0) throw fail("fork", fork_errno);
  ChildStatus child;
  ssize_t got;
  do got = ::read(ready[0], &child, sizeof child);
  while (got < 0 && errno == EINTR);
  if (got != sizeof child) throw fail("helper process", EIO);
  if (child.step != 0) throw fail(kSteps[child.step], child.err);

  const std::string uid = std::to_string(plan.user.uid), gid = std::to_string(plan.user.gid);
  if ((opened.userns = open_ns(pid, "user")) < 0) throw fail("open user namespace", errno);
  const bool has_workspace = plan.bind_source || plan.tmpfs_options;
  if (has_workspace && (opened.mountns = open_ns(pid, "mnt")) < 0) throw fail("open mount namespace", errno);
  if (plan.tmpfs_options) {
    const std::string root = "/proc/" + std::to_string(pid) + "/root" + workspace_mount_point();
    if ((opened.workspace = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
      throw fail("open the workspace's tmpfs", errno);
  }
  // setgroups deny: nothing in the jail can ever drop its group to get past a deny ACL.
  if (int err = write_proc(pid, "setgroups", "deny")) throw fail("setgroups", err);
  if (int err = write_proc(pid, "uid_map", uid + " " + uid + " 1\n")) throw fail("uid_map", err);
  if (int err = write_proc(pid, "gid_map", gid + " " + gid + " 1\n")) throw fail("gid_map", err);
  finish();
  return opened;
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
  ChildPlan plan;
  plan.user = user;
  plan.bind_source = workspace.empty() ? nullptr : workspace.c_str();
  Opened o = prepare(plan);
  return JailNamespaces(o.userns, o.mountns);
}

JailNamespaces JailNamespaces::create_in_memory(const std::optional<JailUser>& jail_user, std::uint64_t size_bytes) {
  // Without a jail user the caller maps itself: an unprivileged user may map only its own ids.
  ChildPlan plan;
  plan.user = jail_user ? *jail_user : JailUser{::getuid(), ::getgid()};
  plan.self_userns = !jail_user;
  // Only the jail's user may enter it; as root, root walks in anyway.
  std::string options = "mode=0700,uid=" + std::to_string(plan.user.uid) + ",gid=" + std::to_string(plan.user.gid);
  if (plan.self_userns) options = "mode=0700";  // ids as seen inside, where they map to themselves
  if (size_bytes) options += ",size=" + std::to_string(size_bytes);
  plan.tmpfs_options = options.c_str();
  Opened o = prepare(plan);
  return JailNamespaces(o.userns, o.mountns, o.workspace, /*jail_joins_userns=*/!plan.self_userns);
}

JailNamespaces::JailNamespaces(JailNamespaces&& other) noexcept
    : userns_fd_(other.userns_fd_), mountns_fd_(other.mountns_fd_), workspace_fd_(other.workspace_fd_),
      jail_joins_userns_(other.jail_joins_userns_) {
  other.userns_fd_ = other.mountns_fd_ = other.workspace_fd_ = -1;
}

JailNamespaces::~JailNamespaces() {
  if (userns_fd_ >= 0) ::close(userns_fd_);
  if (mountns_fd_ >= 0) ::close(mountns_fd_);
  if (workspace_fd_ >= 0) ::close(workspace_fd_);
}

}  // namespace corral::local
