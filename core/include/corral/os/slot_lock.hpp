// One of N slots shared by every corral process of a machine, without a daemon: each slot
// is a file in one folder whose lock its holder keeps, so a process that dies (or is
// killed) gives its slot back with its descriptors, at once. For a bound on work that ends
// with its process. (The fleet limiter, lease/fleet_gate.hpp, cannot use it: a kept or
// pooled sandbox holds its place after its process is gone, so its seats are per lease.)
//
// Threads: take() may be called from several threads and processes at once; each slot
// goes to one of them. A SlotLock belongs to one thread at a time; moving it hands it on.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "corral/os/file_lock.hpp"

namespace corral::os {

class SlotLock {
 public:
  SlotLock() = default;
  bool held() const { return lock_.held(); }
  // The slot's number, 0 to N-1 (-1 when none is held).
  int slot() const { return slot_; }
  // Gives the slot back now (destruction does too).
  void release();

  // How many of the `slots` slots in `dir` are taken right now.
  static int in_use(const std::filesystem::path& dir, int slots);
  // Takes a free one of the `slots` slots in `dir` (made, mode 0700, when missing): at
  // once when one is free, else waiting, polled every `poll` (so a slot given back, even
  // by a process killed, is taken within that), reporting the count in use through
  // `waiting(in_use)` when it starts to wait and whenever the count changes. Throws
  // cancelled when `hooks.cancelled` says so, invalid-argument for `slots` below 1, and
  // as FileLock does for a slot file it cannot open. `what` names the slots in errors.
  static SlotLock take(const std::filesystem::path& dir, int slots, const std::string& what,
                       const std::function<void(int in_use)>& waiting = {}, const WaitHooks& hooks = {},
                       std::chrono::milliseconds poll = std::chrono::milliseconds(50));

 private:
  SlotLock(FileLock lock, int slot) : lock_(std::move(lock)), slot_(slot) {}
  FileLock lock_;
  int slot_ = -1;
};

}  // namespace corral::os
