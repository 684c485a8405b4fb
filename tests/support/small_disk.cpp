#include "small_disk.hpp"

#include <sys/mount.h>
#include <unistd.h>

#include <string>

#include <doctest/doctest.h>

namespace fs = std::filesystem;

namespace corral::test {

SmallDisk::SmallDisk(const fs::path& at, std::size_t bytes) : at_(at) {
  std::error_code ec;
  fs::create_directories(at_, ec);
  if (::geteuid() != 0) return;
  const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
  mounted_ = ::mount("tmpfs", at_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0;
}

SmallDisk::~SmallDisk() {
  if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
}

bool SmallDisk::skipped(const std::string& for_what) const {
  if (mounted_) return false;
  MESSAGE("skipped: a small tmpfs for " << for_what << " needs root");
  return true;
}

fs::path SmallDisk::fill(const std::string& name) const {
  fs::path file = at_ / name;
  fill_disk(file.string());
  return file;
}

}  // namespace corral::test
