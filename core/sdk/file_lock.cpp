#include "corral/sdk/file_lock.hpp"

#include <fcntl.h>
#include <sys/stat.h>

namespace corral::sdk {

bool still_named(int fd, const std::filesystem::path& path) {
  struct stat held {}, named {};
  return ::fstat(fd, &held) == 0 && ::fstatat(AT_FDCWD, path.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
         held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

}  // namespace corral::sdk
