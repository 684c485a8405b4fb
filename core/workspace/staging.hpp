// The private folder where workspace archives are built before upload. Each archive is
// locked by the process building it; one whose process died (kill -9, power loss) is
// unlocked and removed by the next corral, so partial archives never pile up.
#pragma once

#include <filesystem>

#include "corral/os/file_lock.hpp"

namespace corral {

class StagedArchive {
 public:
  // A new, empty, locked file in `dir` (created 0700); stale archives there are removed first.
  explicit StagedArchive(const std::filesystem::path& dir);
  ~StagedArchive();
  StagedArchive(const StagedArchive&) = delete;
  StagedArchive& operator=(const StagedArchive&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  os::FileLock lock_;  // held for as long as the archive is in use
};

// Removes the archives in `dir` that no live process holds; returns how many.
int sweep_stale_archives(const std::filesystem::path& dir);

}  // namespace corral
