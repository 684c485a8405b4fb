#include "corral/os/slot_lock.hpp"

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "corral/os/errno_error.hpp"

namespace fs = std::filesystem;

namespace corral::os {
namespace {

fs::path slot_file(const fs::path& dir, int slot) { return dir / ("slot-" + std::to_string(slot) + ".lock"); }

// Makes `dir` when missing, private: who holds which slot is nobody else's business.
void ensure_dir(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const int err = ec ? ec.value() : errno;
    throw errno_error(write_error_code(err), "cannot make the folder of " + what + ", " + dir.string(), err);
  }
  if (!S_ISDIR(st.st_mode))
    throw Error(ErrorCode::config, "the folder of " + what + ", " + dir.string() + ", is not a folder",
                "remove it: corral makes it anew");
}

}  // namespace

void SlotLock::release() {
  lock_ = FileLock();
  slot_ = -1;
}

int SlotLock::in_use(const fs::path& dir, int slots) {
  int n = 0;
  for (int i = 0; i < slots; ++i) n += FileLock::held_elsewhere(slot_file(dir, i)) ? 1 : 0;
  return n;
}

SlotLock SlotLock::take(const fs::path& dir, int slots, const std::string& what,
                        const std::function<void(int in_use)>& waiting, const WaitHooks& hooks,
                        std::chrono::milliseconds poll) {
  if (slots < 1) throw Error(ErrorCode::invalid_argument, what + ": a limit of " + std::to_string(slots) + " slots",
                             "a limit is 1 or more");
  ensure_dir(dir, what);
  int last_reported = -1;
  bool waited = false;
  while (true) {
    // From a random first slot: processes arriving together spread over the free ones
    // instead of all trying slot 0 first.
    const int first = static_cast<int>(static_cast<unsigned>(::getpid()) % static_cast<unsigned>(slots));
    for (int k = 0; k < slots; ++k) {
      const int i = (first + k) % slots;
      if (std::optional<FileLock> lock = FileLock::try_acquire(slot_file(dir, i), what)) return {std::move(*lock), i};
    }
    if (!waited && hooks.on_wait) hooks.on_wait();
    waited = true;
    if (waiting) {
      const int busy = in_use(dir, slots);
      if (busy != last_reported) waiting(busy);
      last_reported = busy;
    }
    if (hooks.cancelled && hooks.cancelled()) throw Error(ErrorCode::cancelled, "stopped waiting for " + what);
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace corral::os
