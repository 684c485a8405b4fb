// Holding a local sandbox on disk to its size limit, as a kubelet holds a Pod to its
// ephemeral-storage limit: by measuring what its folders hold while a command runs and
// stopping a command that grows one past the limit. A folder on disk has no bound of its
// own (quotas need root and a file system that keeps them), so this is its bound; an
// in-memory sandbox's tmpfs needs none.
//
// Threads: a SizeGuard belongs to the thread that made it; it measures on a thread of
// its own, and exceeded() may be asked from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "corral/os/parallel_thread.hpp"

namespace corral::local {

// What `folder` holds on disk as `du -s -x -B1` counts it: its blocks, a file with several
// links once, links not followed, nothing of another file system. nullopt when it cannot
// be measured (gone, or `stop` said so first).
std::optional<std::uint64_t> disk_usage(const std::filesystem::path& folder, const std::function<bool()>& stop = {});

// One folder a guard measures: its path and its name in messages ("its workspace").
struct GuardedFolder {
  std::string name;
  std::filesystem::path path;
};

class SizeGuard {
 public:
  // Measures each of `folders` at once, then every few seconds (a measure that takes long
  // spaces the next ones out) until destroyed. Each may hold `limit` bytes, or what it held
  // at the first measure when that was more (a command may shrink a sandbox that is over,
  // not grow it). A limit of 0 measures nothing.
  SizeGuard(std::vector<GuardedFolder> folders, std::uint64_t limit);
  ~SizeGuard();  // stops measuring: a measure under way, even the first, is stopped
  SizeGuard(const SizeGuard&) = delete;
  SizeGuard& operator=(const SizeGuard&) = delete;

  // True once a folder was found holding more than it may.
  bool exceeded() const { return exceeded_.load(); }
  // Stops measuring in the background and measures every folder once more; true when one
  // holds more than it may now or did before.
  bool check_now();
  // Which folder held how much, e.g. "its workspace held 600 MiB, past its limit of
  // 512 MiB"; empty until exceeded().
  std::string what_exceeded() const;

 private:
  // Measures every folder; records the first over its bound and returns false then (or
  // when `stop` said so).
  bool measure_all(const std::function<bool()>& stop);
  void stop_measuring();

  std::vector<GuardedFolder> folders_;
  std::vector<std::optional<std::uint64_t>> allowed_;  // what each may hold, once measured; under mutex_
  const std::uint64_t limit_;
  std::atomic<bool> exceeded_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> abandoned_{false};  // destroyed: even the first measure is cut short
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::string what_exceeded_;  // under mutex_
  os::ParallelThread measurer_;
};

}  // namespace corral::local
