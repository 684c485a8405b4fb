// Filling a (small, test-made) disk to its last byte, so the next write there meets a
// real ENOSPC. Header-only: the testbox plugin uses it too.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <string>

namespace corral::test {

// Appends zeros to `path` until its disk is full, or `max_bytes` were written (so a test
// pointed at a real disk by mistake cannot fill it). True when the disk is full.
inline bool fill_disk(const std::string& path, std::size_t max_bytes = std::size_t{64} << 20) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const std::string zeros(std::size_t{1} << 16, '\0');
  std::size_t written = 0;
  bool full = false;
  // Halving the block after each refusal reaches the last free byte.
  for (std::size_t block = zeros.size(); block > 0 && written < max_bytes; block /= 2) {
    for (ssize_t n; written < max_bytes && (n = ::write(fd, zeros.data(), block)) > 0;)
      written += static_cast<std::size_t>(n);
    full = written < max_bytes;
  }
  ::close(fd);
  return full;
}

}  // namespace corral::test
