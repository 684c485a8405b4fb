#include "corral/os/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "corral/errors.hpp"

namespace corral::os {
namespace {

// What a file that is not a regular file is, for the message.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

}  // namespace

std::optional<std::string> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                                             const std::string& what, Links links) {
  const std::string name = what + " " + path.string();
  auto refused = [&](const std::string& why) {
    return Error(ErrorCode::invalid_argument, name + " cannot be read: " + why,
                 "corral reads only regular files there; replace it with one, or remove it");
  };
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (links == Links::refuse ? O_NOFOLLOW : 0);
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    if (errno == ELOOP && links == Links::refuse) throw refused("it is a symbolic link");
    throw refused(std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const mode_t mode = st.st_mode;
    ::close(fd);
    throw refused(std::string("it is ") + kind_of(mode));
  }
  std::string text;
  char buffer[64 * 1024];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw refused(std::strerror(err));
    }
    text.append(buffer, static_cast<size_t>(got));
    if (text.size() > max_bytes) {
      ::close(fd);
      throw refused("it is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return text;
}

}  // namespace corral::os
