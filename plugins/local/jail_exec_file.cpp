#include "jail_exec_file.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "corral/errors.hpp"
#include "corral/os/atomic_file.hpp"
#include "corral/sdk/printable.hpp"
#include "corral/os/process.hpp"
#include "corral/os/read_file.hpp"
#include "corral/os/trusted_path.hpp"
#include "jail_ids.hpp"

namespace corral::local {
namespace {

// How long the version probe may take: a static program that prints a line.
constexpr long kProbeSeconds = 10;

// Whether the permission bits of `st` let `user` execute it (root: any execute bit).
bool may_execute(const struct stat& st, const JailUser& user) {
  if (user.uid == 0) return st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH);
  if (st.st_uid == user.uid) return st.st_mode & S_IXUSR;
  if (st.st_gid == user.gid) return st.st_mode & S_IXGRP;
  return st.st_mode & S_IXOTH;
}

Error unusable(const std::filesystem::path& path, const std::string& why) {
  return Error(ErrorCode::unavailable, "the local provider's jail starter " + path.string() + " is unusable: " + why,
               "reinstall corral: the starter installs with the local plugin, in <prefix>/libexec/corral");
}

// What identifies one version of the file `st` describes, and the protocol it passed for.
std::string version_of(const struct stat& st) {
  return std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
         std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec) + " " +
         jail_exec_probe_answer();
}

// True when `verified` remembers this very version of the file as having passed.
bool remembered(const std::filesystem::path& verified, const std::string& version) {
  try {
    return os::read_regular_file(verified, 4096, "the jail starter's verification", os::Links::refuse) == version;
  } catch (const Error&) {
    return false;  // unreadable: probed again, and written anew
  }
}

// Throws unless the file open as `fd` starts with ELF's magic: the starter is a static
// program, so a script (which would answer the probe through an interpreter) is not it.
void require_program(int fd, const std::filesystem::path& path) {
  char magic[4] = {};
  const ssize_t n = ::pread(fd, magic, sizeof magic, 0);
  if (n == static_cast<ssize_t>(sizeof magic) && std::memcmp(magic, "\x7f" "ELF", sizeof magic) == 0) return;
  throw unusable(path, n < 0 ? std::string("it cannot be read: ") + std::strerror(errno)
                             : std::string("it is not the starter program (no ELF header: ") +
                                   (n == 0 ? "the file is empty)" : "another kind of file)"));
}

// Runs the starter open as `fd` with no arguments; throws unless it answers exactly
// jail_exec_probe_answer().
void probe(int fd, const std::filesystem::path& path) {
  // Run by the descriptor's own number, which names it in this process and the child
  // alike (the child gets passed descriptors at small numbers only).
  const os::UniqueFd low(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
  if (low.get() < 0) throw unusable(path, std::string("it cannot be probed: ") + std::strerror(errno));
  os::ProcessSpec spec;
  spec.argv = {"/proc/self/fd/" + std::to_string(low.get())};
  spec.pass_fds = {{low.get(), low.get()}};
  spec.env = std::vector<std::string>{};
  os::CapturedProcess p;
  try {
    p = os::capture_process(spec, kProbeSeconds);
  } catch (const Error& e) {
    throw unusable(path, std::string("it cannot be started: ") + e.what());
  }
  if (p.exit_code == 0 && p.out == jail_exec_probe_answer()) return;
  std::string answer = p.out.substr(0, 80);
  throw unusable(path, "it is not the complete starter of this corral (asked for its version, it " +
                           (p.exit_code == 0 ? std::string("answered '") + sdk::printable(answer) + "'"
                                             : "exited with status " + std::to_string(p.exit_code)) +
                           "; expected '" + sdk::printable(jail_exec_probe_answer()) + "')");
}

}  // namespace

const char* jail_exec_probe_answer() { return "corral-jail-exec " CORRAL_JAIL_EXEC_PROTOCOL "\n"; }

std::filesystem::path jail_exec_path() {
  Dl_info self{};
  if (::dladdr(reinterpret_cast<void*>(&jail_exec_path), &self) == 0 || !self.dli_fname)
    throw Error(ErrorCode::internal, "the local plugin cannot tell where its own file is");
  return (std::filesystem::path(self.dli_fname).parent_path() / CORRAL_JAIL_EXEC_RELPATH).lexically_normal();
}

std::filesystem::path egress_tls_module_path() { return jail_exec_path().parent_path() / "libcorral-egress-tls.so"; }

os::UniqueFd open_jail_exec(const std::optional<JailUser>& as_user, const std::filesystem::path& verified) {
  const JailUser user = as_user ? *as_user : JailUser{::geteuid(), ::getegid()};
  const std::filesystem::path path = jail_exec_path();
  const os::TrustCheck trust = os::check_trusted_path(path);
  if (trust.distrust) {
    // Missing is said plainly; anything else names the part at fault and the fix.
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) throw unusable(path, std::strerror(ENOENT));
    throw unusable(path, "it cannot be trusted: " + trust.distrust->describe());
  }
  // Non-blocking: a FIFO in its place is refused below, not waited on.
  os::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || !may_execute(st, user)) {
    const std::string why = fd.get() < 0         ? std::strerror(errno)
                            : !S_ISREG(st.st_mode) ? "not a file"
                            : is_jail_id(user.uid) ? "the jails' own users (uids " + std::to_string(kJailIdFirst) +
                                                         " up) may not execute it"
                                                   : "uid " + std::to_string(user.uid) + " may not execute it";
    throw unusable(path, why);
  }
  const std::string version = version_of(st);
  if (!remembered(verified, version)) {
    require_program(fd.get(), path);
    probe(fd.get(), path);
    try {
      std::error_code ec;
      std::filesystem::create_directories(verified.parent_path(), ec);
      os::write_file_atomically(verified, version, 0600, "the jail starter's verification",
                                 os::Durability::process_crash);
    } catch (const Error&) {
      // Not remembered (the folder is not made yet, a full disk): probed again next time.
    }
  }
  return fd;
}

}  // namespace corral::local
