#include "lease/output_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <thread>

#include "lease/claims.hpp"
#include "corral/errors.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

constexpr const char* kHint = "name a writable file in an existing folder, a FIFO or /dev/stdout";

Error cannot_write(const fs::path& path, const std::string& what, const std::string& why) {
  return Error(ErrorCode::invalid_argument, fmt::format("cannot write the {} to {}: {}", what, path.string(), why),
               kHint);
}

Error cannot_write(const fs::path& path, const std::string& what, int err) {
  return cannot_write(path, what, std::strerror(err));
}

// A wait for a reader ended by the user (a stop signal): interrupted, not a bad file.
Error stopped(const fs::path& path, const std::string& what, const std::string& why) {
  return Error(ErrorCode::cancelled, fmt::format("the {} was not written to {}: {} when corral was stopped", what,
                                                 path.string(), why));
}

// Where a path leads once its links are followed.
struct Target {
  enum class Kind { descriptor, stream, regular } kind;
  int fd = -1;    // descriptor: this process's
  fs::path path;  // stream: what to open; regular: what to replace
};

// The descriptor `p` (absolute, normal) names as a file, or -1: /dev/stdin, /dev/stdout,
// /dev/stderr, and N under /dev/fd, /proc/self/fd, /proc/thread-self/fd or /proc/<pid>/fd
// of this process. Opening these would make a new description of the file behind it (at
// offset 0, without O_APPEND) or, for a deleted file, nothing to open at all.
int named_descriptor(const fs::path& p) {
  const std::string s = p.string();
  if (s == "/dev/stdin") return 0;
  if (s == "/dev/stdout") return 1;
  if (s == "/dev/stderr") return 2;
  const std::string own = fmt::format("/proc/{}/fd/", ::getpid());
  for (const std::string& folder : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    std::string("/proc/thread-self/fd/"), own}) {
    if (s.size() <= folder.size() || s.compare(0, folder.size(), folder) != 0) continue;
    int fd = -1;
    const char* first = s.data() + folder.size();
    const char* last = s.data() + s.size();
    auto [end, ec] = std::from_chars(first, last, fd);
    if (ec == std::errc() && end == last && fd >= 0) return fd;
  }
  return -1;
}

bool under_proc(const fs::path& p) { return p.string().rfind("/proc/", 0) == 0; }

// Where `given` leads: its folder resolved, then each symlink of its last part followed
// (a bounded number of times) until a descriptor, a stream or a regular file (or none yet).
Target resolve(const fs::path& given, const std::string& what) {
  std::error_code ec;
  fs::path p = fs::absolute(given, ec).lexically_normal();
  if (ec) throw cannot_write(given, what, ec.value());
  for (int links = 0; links < 40; ++links) {
    if (int fd = named_descriptor(p); fd >= 0) return {Target::Kind::descriptor, fd, p};
    if (p.filename().empty()) throw cannot_write(given, what, EISDIR);
    fs::path folder = fs::canonical(p.parent_path(), ec);
    if (ec)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("cannot write the {} to {}: the folder {} does not exist", what, given.string(),
                              p.parent_path().string()),
                  "create the folder first, or name a file in one that exists");
    p = folder / p.filename();
    if (int fd = named_descriptor(p); fd >= 0) return {Target::Kind::descriptor, fd, p};
    // /proc's links are not paths: opening one reaches what it stands for.
    if (under_proc(p)) return {Target::Kind::stream, -1, p};
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return {Target::Kind::regular, -1, p};
      throw cannot_write(given, what, errno);
    }
    if (S_ISLNK(st.st_mode)) {
      fs::path link = fs::read_symlink(p, ec);
      if (ec) throw cannot_write(given, what, ec.value());
      p = (link.is_absolute() ? link : folder / link).lexically_normal();
      continue;
    }
    if (S_ISDIR(st.st_mode)) throw cannot_write(given, what, EISDIR);
    return {S_ISREG(st.st_mode) ? Target::Kind::regular : Target::Kind::stream, -1, p};
  }
  throw cannot_write(given, what, ELOOP);
}

// Waits up to 100 ms for `fd` to take more; false once `give_up` says so.
bool wait_writable(int fd, const std::function<bool()>& give_up) {
  if (give_up && give_up()) return false;
  pollfd p{fd, POLLOUT, 0};
  ::poll(&p, 1, 100);
  return true;
}

// Writes all of `text` to `fd`, waiting while a reader is slow; throws as cannot_write.
void write_through(int fd, std::string_view text, const std::function<bool()>& give_up, const fs::path& path,
                   const std::string& what) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n >= 0) {
      text.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (errno != EINTR && errno != EAGAIN) throw cannot_write(path, what, errno);
    if (!wait_writable(fd, give_up)) throw stopped(path, what, "its reader was not reading");
  }
}

// Why the stream `path` cannot be opened, failing with `err`. ENXIO means "no reader yet"
// only for a FIFO; for a device it is final: /dev/tty in a process without a terminal.
Error cannot_open_stream(const fs::path& path, const std::string& what, int err) {
  struct stat st {};
  if (err == ENXIO && ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
    return cannot_write(path, what, "it is a socket, which cannot be opened as a file");
  if (err == ENXIO)
    return Error(ErrorCode::invalid_argument,
                 fmt::format("cannot write the {} to {}: no such device or address{}", what, path.string(),
                             path == "/dev/tty" ? " (corral has no controlling terminal: CI jobs, cron and setsid "
                                                  "give none)"
                                                : ""),
                 "name a file, /dev/stdout or /dev/stderr instead");
  return cannot_write(path, what, err);
}

// True when `path` (followed) is a FIFO: its open waits for a reader.
bool names_fifo(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

// Opens the stream `path` to append, waiting (until `give_up`) for a FIFO's reader
// rather than blocking where no signal could end the wait. Non-blocking from then on.
int open_stream(const fs::path& path, const std::function<bool()>& give_up, const fs::path& given,
                const std::string& what) {
  const bool fifo = names_fifo(path);
  while (true) {
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0) return fd;
    if ((errno != ENXIO || !fifo) && errno != EINTR) throw cannot_open_stream(given, what, errno);
    if (give_up && give_up()) throw stopped(given, what, "nothing was reading the FIFO");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

OutputFile::OutputFile(fs::path path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
  Target target = resolve(path_, what_);
  if (target.kind == Target::Kind::stream && !names_fifo(target.path)) {
    // A device that cannot be opened now will not be later either: said before anything
    // is created. (A FIFO is opened at the write: opening it now would wait for a reader.)
    const int fd = ::open(target.path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno != EINTR) throw cannot_open_stream(path_, what_, errno);
    if (fd >= 0) ::close(fd);
  }
  if (target.kind != Target::Kind::descriptor) return;
  int flags = ::fcntl(target.fd, F_GETFL);
  if (flags < 0) throw cannot_write(path_, what_, fmt::format("descriptor {} is not open", target.fd));
  if ((flags & O_ACCMODE) == O_RDONLY)
    throw cannot_write(path_, what_, fmt::format("descriptor {} is open for reading only", target.fd));
}

bool OutputFile::rewritable() const { return resolve(path_, what_).kind == Target::Kind::regular; }

void OutputFile::write(std::string_view text, const std::function<bool()>& give_up) const {
  Target target = resolve(path_, what_);
  switch (target.kind) {
    case Target::Kind::descriptor:
      write_through(target.fd, text, give_up, path_, what_);
      return;
    case Target::Kind::stream: {
      int fd = open_stream(target.path, give_up, path_, what_);
      try {
        write_through(fd, text, give_up, path_, what_);
      } catch (...) {
        ::close(fd);
        throw;
      }
      ::close(fd);
      return;
    }
    case Target::Kind::regular:
      try {
        write_file_atomically(target.path, text, 0644, what_);
      } catch (const Error& e) {
        // A full disk stays a quota problem: the file named may be fine once there is room.
        if (e.code() == ErrorCode::quota)
          throw Error(ErrorCode::quota, e.what(), "free space on its disk, or name a file on another one");
        throw Error(ErrorCode::invalid_argument, e.what(), kHint);
      }
      return;
  }
}

}  // namespace corral
