// A small tmpfs mounted on a folder for a test's life, so the test meets a real full disk
// (ENOSPC) where corral writes. Mounting needs root; where it is refused the test skips.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "fill_disk.hpp"

namespace corral::test {

class SmallDisk {
 public:
  // Mounts a tmpfs of `bytes` on `at` (created when missing), if this process may.
  SmallDisk(const std::filesystem::path& at, std::size_t bytes);
  ~SmallDisk();  // unmounts it (lazily: a process may still hold a file there)
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  // False when mounting was refused (not root, or no CAP_SYS_ADMIN here).
  bool mounted() const { return mounted_; }
  // True when it is not mounted, after telling the test's output that a tmpfs for
  // `for_what` needs root; the test then returns (doctest has no skip).
  bool skipped(const std::string& for_what) const;
  // Fills it to the last byte with a file named `name`, returned.
  std::filesystem::path fill(const std::string& name = "filler") const;

 private:
  std::filesystem::path at_;
  bool mounted_ = false;
};

}  // namespace corral::test
