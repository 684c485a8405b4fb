#include "jail_namespaces.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
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

Error refused(const std::string& step, int err) {
  return Error(ErrorCode::unavailable,
               "bubblewrap cannot create a sandbox here: root cannot prepare the jail's namespaces (" + step +
                   "): " + std::strerror(err),
               "root must be able to create user and mount namespaces: in a container allow unshare "
               "(e.g. docker run --security-opt seccomp=unconfined --cap-add SYS_ADMIN, or --privileged), or pick "
               "another provider with --provider");
}

// The step the child failed at, named in the error.
enum Step : int {
  kNone,
  kUnshareMount,
  kPrivateMounts,
  kBindWorkspace,
  kMountLayout,
  kMakeLayout,
  kBindTmp,
  kUnshareUser,
  kBecomeJailUser,
  kForbidNestedUser,
  kUnshareOwnUser,
  kMountTmpfs,
  kOpenUser,
  kOpenMount,
  kOpenTmpfs,
};
constexpr const char* kSteps[] = {"",
                                  "unshare mount namespace",
                                  "make mounts private",
                                  "bind the workspace",
                                  "mount the folders' tmpfs",
                                  "make the workspace's and /tmp's folders",
                                  "bind the kept /tmp",
                                  "unshare user namespace",
                                  "become the jail's user",
                                  "forbid user namespaces inside the jail",
                                  "unshare a user namespace of one's own",
                                  "mount the workspace's tmpfs",
                                  "open user namespace",
                                  "open mount namespace",
                                  "open the workspace's tmpfs"};
static_assert(sizeof kSteps / sizeof *kSteps == kOpenTmpfs + 1, "a name for every step");

// What the child makes: the workspace at the mount point (a bind of `bind_source`, a
// tmpfs with `tmpfs_options`, or nothing), then the jail's user namespace for `user`
// (corral is root), or, with `self_userns`, first a user namespace of the caller's own
// in which the mount namespace is made. With `tmp_source` too, the mount point holds a
// small tmpfs of root's with two folders, `workspace_point` and `tmp_point`, on which
// the two are bound.
struct ChildPlan {
  JailUser user{};  // set by create() and create_in_memory()
  const char* bind_source = nullptr;
  const char* tmp_source = nullptr;
  const char* workspace_point = nullptr;
  const char* tmp_point = nullptr;
  const char* tmpfs_options = nullptr;
  bool self_userns = false;
};

// The child's whole world: it shares this process's memory and descriptor table, so it
// reads its plan here (it must not allocate), leaves the descriptors it opened and the
// step it failed at here, says so on `ready` and waits for end-of-file on `release`.
struct ChildRun {
  const ChildPlan* plan = nullptr;
  const char* mount_point = nullptr;
  int ready = -1;    // the child writes one byte once it is done or failed
  int release = -1;  // the child exits at its end-of-file
  int failed_step = kNone;
  int failed_errno = 0;
  JailNamespaces::Opened opened;
};

// The child runs on this process's memory beside its threads: raw system calls only,
// none of which libc or a sanitizer wraps, since a wrapper's bookkeeping (errno aside)
// would be the starting thread's or another's. libc's set*id would even change every
// thread of corral.
#define CORRAL_RAW_CHILD __attribute__((no_sanitize("address", "undefined"), noinline))

CORRAL_RAW_CHILD long raw_open(const char* path, int flags) {
  return ::syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, 0);
}

// Writes `text` (`size` bytes) to the file at `path`; 0, or the errno.
CORRAL_RAW_CHILD int raw_write_file(const char* path, const char* text, size_t size) {
  const long fd = raw_open(path, O_WRONLY);
  if (fd < 0) return errno;
  const long wrote = ::syscall(SYS_write, fd, text, size);
  const int err = wrote == static_cast<long>(size) ? 0 : wrote < 0 ? errno : EIO;
  ::syscall(SYS_close, fd);
  return err;
}

// Makes the permitted capabilities effective again. Failure is ignored: unprivileged
// namespaces may be allowed anyway.
CORRAL_RAW_CHILD void raise_permitted_caps() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return;
  for (auto& d : data) d.effective = d.permitted;
  (void)::syscall(SYS_capset, &header, data);
}

// Writes "/proc/self/fd/N" for `fd` into `out` (room for 32 bytes), without allocating.
CORRAL_RAW_CHILD void fd_path(char* out, long fd) {
  const char prefix[] = "/proc/self/fd/";
  size_t n = 0;
  for (; prefix[n] != '\0'; ++n) out[n] = prefix[n];
  char digits[20];
  size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + fd % 10);
    fd /= 10;
  } while (fd > 0 && count < sizeof digits);
  while (count > 0) out[n++] = digits[--count];
  out[n] = '\0';
}

// In the child's new mount namespace: the workspace and the kept /tmp at their points, two
// folders of a tmpfs of root's at the mount point; the failed step, else kNone.
CORRAL_RAW_CHILD int bind_kept_layout(ChildRun& run) {
  const ChildPlan& plan = *run.plan;
  int step = kNone;
  long held[2] = {-1, -1};
  const char* sources[2] = {plan.bind_source, plan.tmp_source};
  const char* points[2] = {plan.workspace_point, plan.tmp_point};
  for (int i = 0; i < 2 && step == kNone; ++i)
    if ((held[i] = raw_open(sources[i], O_PATH | O_DIRECTORY | O_NOFOLLOW)) < 0) step = i == 0 ? kBindWorkspace : kBindTmp;
  // Made before the user namespace, so root owns the tmpfs: the jail's user may walk it, not change it.
  if (step == kNone &&
      ::syscall(SYS_mount, "tmpfs", run.mount_point, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") != 0)
    step = kMountLayout;
  for (int i = 0; i < 2 && step == kNone; ++i)
    if (::syscall(SYS_mkdirat, AT_FDCWD, points[i], 0755) != 0) step = kMakeLayout;
  for (int i = 0; i < 2 && step == kNone; ++i) {
    char path[32];
    fd_path(path, held[i]);
    if (::syscall(SYS_mount, path, points[i], nullptr, MS_BIND, nullptr) != 0) step = i == 0 ? kBindWorkspace : kBindTmp;
  }
  if (step != kNone) run.failed_errno = errno;
  for (long fd : held)
    if (fd >= 0) ::syscall(SYS_close, fd);
  return step;
}

// The child's steps; the one that failed, else kNone (errno in run.failed_errno).
CORRAL_RAW_CHILD int make_namespaces(ChildRun& run) {
  const ChildPlan& plan = *run.plan;
  auto fail = [&run](int step) {
    run.failed_errno = errno;
    return step;
  };
  if (plan.self_userns) {
    // The parent, the same user, maps it: /proc/<child> must be that user's, which an
    // undumpable corral's is not (the flag is the memory's, so corral's; restored after).
    ::syscall(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0);
    if (::syscall(SYS_unshare, CLONE_NEWUSER) != 0) return fail(kUnshareOwnUser);
  }
  if (plan.bind_source || plan.tmpfs_options) {
    if (::syscall(SYS_unshare, CLONE_NEWNS) != 0) return fail(kUnshareMount);
    // Slave, so the mount below never propagates back to the host's mount table.
    if (::syscall(SYS_mount, nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return fail(kPrivateMounts);
    if (plan.tmp_source) {
      // Both held open first: the tmpfs below would hide them when the state folder is
      // under the mount point (a scratch disk at /mnt).
      const int step = bind_kept_layout(run);
      if (step != kNone) return step;
    } else if (plan.bind_source &&
               ::syscall(SYS_mount, plan.bind_source, run.mount_point, nullptr, MS_BIND, nullptr) != 0) {
      return fail(kBindWorkspace);
    }
    if (plan.tmpfs_options &&
        ::syscall(SYS_mount, "tmpfs", run.mount_point, "tmpfs", MS_NOSUID | MS_NODEV, plan.tmpfs_options) != 0)
      return fail(kMountTmpfs);
    if ((run.opened.mountns = static_cast<int>(raw_open("/proc/self/ns/mnt", O_RDONLY))) < 0) return fail(kOpenMount);
    if (plan.tmpfs_options &&
        (run.opened.workspace = static_cast<int>(raw_open(run.mount_point, O_RDONLY | O_DIRECTORY))) < 0)
      return fail(kOpenTmpfs);
  }
  // The user namespace is made with the jail's uid as effective uid, which makes that
  // user its owner: bwrap, started as that user, may then join it, and bwrap's processes
  // all share one identity (so --die-with-parent's signal is allowed to reach the jail).
  // Root's capabilities are raised again, so hosts that restrict unprivileged user
  // namespaces (a sysctl, AppArmor) still let root make it.
  if (!plan.self_userns) {
    if (::syscall(SYS_setresuid, -1, plan.user.uid, -1) != 0) return fail(kBecomeJailUser);
    // The kernel set the memory's dumpable flag to fs.suid_dumpable: corral's memory,
    // shared with a task of the jail's user, must never be dumpable (see prepare()).
    ::syscall(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0);
    raise_permitted_caps();
    if (::syscall(SYS_unshare, CLONE_NEWUSER) != 0) return fail(kUnshareUser);
    // No user namespace nested in it (what bwrap --disable-userns does for one of its
    // own); the namespace's creator holds CAP_SYS_RESOURCE in it, which the write needs.
    if ((run.failed_errno = raw_write_file("/proc/sys/user/max_user_namespaces", "0", 1))) return kForbidNestedUser;
  }
  if ((run.opened.userns = static_cast<int>(raw_open("/proc/self/ns/user", O_RDONLY))) < 0) return fail(kOpenUser);
  return kNone;
}

CORRAL_RAW_CHILD int child_main(void* arg) {
  ChildRun& run = *static_cast<ChildRun*>(arg);
  run.failed_step = make_namespaces(run);
  const char done = 1;
  ::syscall(SYS_write, run.ready, &done, 1);
  char c;
  while (::syscall(SYS_read, run.release, &c, 1) < 0 && errno == EINTR) {
  }
  ::syscall(SYS_exit, 0);  // this thread only: exit_group would take corral along
  return 0;
}

// Writes `text` to /proc/<pid>/<file>; the errno on failure, else 0.
int write_proc(pid_t pid, const char* file, const std::string& text) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + file;
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int rc = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : errno;
  ::close(fd);
  return rc;
}

// Runs make_namespaces(plan) in a child that shares this process's memory and
// descriptors (no copy of the address space to make and tear down) and, while it
// waits, maps its user namespace to `plan.user` alone: root in the parent namespace may
// map any uid, and writes as root whatever the child's /proc files say. Returns the
// descriptors the child opened, which hold the namespaces once it is gone.
JailNamespaces::Opened prepare(const ChildPlan& plan) {
  ChildRun run;
  run.plan = &plan;
  run.mount_point = workspace_mount_point();
  const int dumpable = ::prctl(PR_GET_DUMPABLE);
  int ready[2], release[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) throw refused("pipe", errno);
  if (::pipe2(release, O_CLOEXEC) != 0) {
    const int err = errno;
    ::close(ready[0]);
    ::close(ready[1]);
    throw refused("pipe", err);
  }
  run.ready = ready[1];
  run.release = release[0];
  constexpr size_t kStackSize = 256 << 10;
  void* stack = ::mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  const int mmap_errno = errno;
  pid_t pid = -1;
  int clone_errno = 0;
  if (stack != MAP_FAILED) {
    // No handler of this process may run on the child's stack: the child starts with
    // every signal blocked, and never unblocks one.
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = ::clone(child_main, static_cast<char*>(stack) + kStackSize, CLONE_VM | CLONE_FILES | SIGCHLD, &run);
    clone_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  // Lets the child go, reaps it and gives back what only it used. The dumpable flag the
  // child of a caller of its own set is put back; one that took the jail's identity left
  // corral undumpable for good, as os::run_process's children do: putting it back could
  // make the memory dumpable while another thread's child of that identity shares it.
  auto finish = [&] {
    ::close(release[1]);
    if (pid > 0)
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    for (int fd : {ready[0], ready[1], release[0]}) ::close(fd);
    if (stack != MAP_FAILED) ::munmap(stack, kStackSize);
    if (plan.self_userns) ::prctl(PR_SET_DUMPABLE, dumpable);
  };
  auto fail = [&](const std::string& step, int err) {
    finish();
    for (int fd : {run.opened.userns, run.opened.mountns, run.opened.workspace})
      if (fd >= 0) ::close(fd);
    return refused(step, err);
  };
  if (stack == MAP_FAILED) throw fail("helper stack", mmap_errno);
  if (pid < 0) throw fail("clone", clone_errno);
  // The child shares this process's descriptors, so its death closes none of them: one
  // killed before it reports is noticed by its exit, not by end-of-file on `ready`.
  bool reported = false;
  while (true) {
    pollfd wait_ready{ready[0], POLLIN, 0};
    const int n = ::poll(&wait_ready, 1, 100);
    if (n > 0) {
      char done = 0;
      reported = ::read(ready[0], &done, 1) == 1;
      break;
    }
    if (n < 0 && errno != EINTR) break;
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;  // reaped: finish() must not wait for it
      break;
    }
  }
  if (!reported) throw fail("helper process", EIO);
  if (run.failed_step != kNone) throw fail(kSteps[run.failed_step], run.failed_errno);
  const std::string uid = std::to_string(plan.user.uid), gid = std::to_string(plan.user.gid);
  // setgroups deny: nothing in the jail can ever drop its group to get past a deny ACL.
  if (int err = write_proc(pid, "setgroups", "deny")) throw fail("setgroups", err);
  if (int err = write_proc(pid, "uid_map", uid + " " + uid + " 1\n")) throw fail("uid_map", err);
  if (int err = write_proc(pid, "gid_map", gid + " " + gid + " 1\n")) throw fail("gid_map", err);
  finish();
  return run.opened;
}

}  // namespace

const char* workspace_mount_point() {
  // /mnt is meant for temporary mounts; a host without one still has /tmp, which the
  // jail replaces with its own tmpfs anyway.
  struct stat st {};
  static const char* point = ::stat("/mnt", &st) == 0 && S_ISDIR(st.st_mode) ? "/mnt" : "/tmp";
  return point;
}

const char* kept_workspace_point() {
  static const std::string point = std::string(workspace_mount_point()) + "/workspace";
  return point.c_str();
}

const char* kept_tmp_point() {
  static const std::string point = std::string(workspace_mount_point()) + "/tmp";
  return point.c_str();
}

JailNamespaces JailNamespaces::create(const JailUser& user, const std::string& workspace, const std::string& tmp) {
  // A child makes the namespaces and opens the fds that hold them alive; this process
  // (root in the parent namespace, hence allowed to map any uid) writes the maps.
  // By path, not by an fd: a mount of the old namespace cannot be bound in the new one.
  // Root-owned 0700 folders lead to it, so the jail's user cannot swap it for a link.
  ChildPlan plan;
  plan.user = user;
  plan.bind_source = workspace.empty() ? nullptr : workspace.c_str();
  if (!workspace.empty() && !tmp.empty()) {
    plan.tmp_source = tmp.c_str();
    plan.workspace_point = kept_workspace_point();
    plan.tmp_point = kept_tmp_point();
  }
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
