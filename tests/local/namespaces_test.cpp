// JailNamespaces: what they hold, and that making them leaves corral's own process as it
// was (its identity on every thread, its descriptors), since the child that makes them
// shares its memory and descriptor table; as root, undumpable for good, since that child
// takes the jail's identity while it shares the memory.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "corral/errors.hpp"
#include "corral/os/fd_write.hpp"
#include "in_child.hpp"
#include "jail_namespaces.hpp"

namespace fs = std::filesystem;
using corral::local::JailNamespaces;
// Any unprivileged user will do for the mechanics tested here.
constexpr corral::local::JailUser kNobody{65534, 65534};
using corral::test::in_child;

namespace {

// The number of descriptors open in this process.
long open_descriptors() {
  long n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;  // the iterator's own
}

// The text of a small file, "" when it cannot be read.
std::string slurp(const char* path) {
  std::string text;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[512];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return text;
}

// What a forked child sees after joining the user namespace `userns_fd`: its uid_map,
// its setgroups, and whether it may make a user namespace inside (the errno, 0 if so).
std::string seen_inside(int userns_fd) {
  return in_child([userns_fd] {
    if (::setns(userns_fd, CLONE_NEWUSER) != 0) return std::string("setns failed");
    std::string report = slurp("/proc/self/uid_map") + slurp("/proc/self/gid_map") + slurp("/proc/self/setgroups");
    report += ::unshare(CLONE_NEWUSER) == 0 ? std::string("nested allowed") : "nested: " + std::to_string(errno);
    return report;
  });
}

// True when this process's user may make a user namespace (tried in a forked child).
bool may_make_user_namespace() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A thread that waits until told, then reports its own effective uid (the kernel's, not
// glibc's idea of the process's).
class WaitingThread {
 public:
  WaitingThread()
      : thread_([this] {
          std::unique_lock lock(mutex_);
          wake_.wait(lock, [this] { return go_; });
          euid_ = static_cast<long>(::syscall(SYS_geteuid));
        }) {}
  long euid_after() {
    {
      std::lock_guard lock(mutex_);
      go_ = true;
    }
    wake_.notify_all();
    thread_.join();
    return euid_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool go_ = false;
  long euid_ = -1;
  std::thread thread_;
};

}  // namespace

TEST_CASE("as root: an in-memory workspace's namespaces, made without touching corral's own process") {
  if (::geteuid() != 0) return;  // only root maps another user; the unprivileged case is below
  REQUIRE(::prctl(PR_SET_DUMPABLE, 1) == 0);
  const long descriptors = open_descriptors();
  WaitingThread other;
  {
    JailNamespaces ns = JailNamespaces::create_in_memory(kNobody, 1 << 20);
    REQUIRE(ns.userns_fd() >= 0);
    REQUIRE(ns.mountns_fd() >= 0);
    REQUIRE(ns.workspace_fd() >= 0);
    CHECK(open_descriptors() == descriptors + 3);
    for (int fd : {ns.userns_fd(), ns.mountns_fd(), ns.workspace_fd()}) CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    // The workspace: a tmpfs of its own, the jail user's alone.
    struct statfs fs_info {};
    REQUIRE(::fstatfs(ns.workspace_fd(), &fs_info) == 0);
    CHECK(fs_info.f_type == TMPFS_MAGIC);
    struct stat st {};
    REQUIRE(::fstat(ns.workspace_fd(), &st) == 0);
    CHECK(st.st_uid == kNobody.uid);
    CHECK(st.st_gid == kNobody.gid);
    CHECK((st.st_mode & 07777) == 0700);
    // The user namespace maps the jail's user alone, denies setgroups and nests nothing.
    const std::string map = "     65534      65534          1\n";
    CHECK(seen_inside(ns.userns_fd()) == map + map + "deny\nnested: " + std::to_string(ENOSPC));
  }
  CHECK(::geteuid() == 0);
  CHECK(::getegid() == 0);
  CHECK(other.euid_after() == 0);  // a libc wrapper would have changed every thread's
  CHECK(::prctl(PR_GET_DUMPABLE) == 0);
  CHECK(open_descriptors() == descriptors);  // the three, closed with the object
}

TEST_CASE("as root: namespaces made on several threads at once, while another thread changes its identity") {
  if (::geteuid() != 0) return;
  // A fan-out's shards make their jails at once, and unpacking as the jail's user changes
  // a thread's identity, which makes the whole process undumpable for a moment.
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    while (!stop) {
      ::syscall(SYS_setresuid, -1, 65534, -1);
      ::syscall(SYS_setresuid, -1, 0, -1);
    }
  });
  std::atomic<int> made{0};
  std::mutex errors_mutex;
  std::string errors;
  std::vector<std::thread> makers;
  for (int t = 0; t < 4; ++t)
    makers.emplace_back([&] {
      for (int i = 0; i < 25; ++i) try {
          JailNamespaces ns = JailNamespaces::create_in_memory(kNobody, 1 << 20);
          if (ns.userns_fd() >= 0 && ns.workspace_fd() >= 0) ++made;
        } catch (const corral::Error& e) {
          std::lock_guard lock(errors_mutex);
          errors += std::string(e.what()) + "\n";
        }
    });
  for (auto& m : makers) m.join();
  stop = true;
  flipper.join();
  CHECK_MESSAGE(made == 100, errors);
  CHECK(::geteuid() == 0);
}

TEST_CASE("as an unprivileged user: the namespaces map the caller to itself") {
  // A forked child becomes nobody (as root) or stays the user it is, and reports.
  const std::string text = in_child([] {
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
                             ::setresuid(65534, 65534, 65534) != 0))
      return std::string("cannot drop root");
    if (!may_make_user_namespace()) return std::string("refused");
    try {
      ::prctl(PR_SET_DUMPABLE, 1);
      JailNamespaces ns = JailNamespaces::create_in_memory(std::nullopt, 1 << 20);
      if (::prctl(PR_GET_DUMPABLE) != 1) return std::string("left undumpable");  // the caller's own: put back
      struct stat st {};
      ::fstat(ns.workspace_fd(), &st);
      const bool mine = st.st_uid == ::geteuid();
      const std::string inside = seen_inside(ns.userns_fd());
      return std::string(mine ? "owned" : "not owned") + "|" + inside.substr(0, inside.find('\n'));
    } catch (const corral::Error& e) {
      return std::string("failed: ") + e.what();
    }
  });
  if (text == "refused") {
    MESSAGE("this host refuses unprivileged user namespaces: nothing to check");
    return;
  }
  INFO(text);
  // The tmpfs is the caller's, and the uid_map maps the caller's own id to itself alone.
  const std::string me = ::geteuid() == 0 ? "65534" : std::to_string(::geteuid());
  CHECK(text.rfind("owned|", 0) == 0);
  std::string map = text.substr(text.find('|') + 1);
  CHECK(map.find(me) != std::string::npos);
  CHECK(map.find(me, map.find(me) + me.size()) != std::string::npos);
  CHECK(map.substr(map.find_last_not_of(' ')) == "1");
}
