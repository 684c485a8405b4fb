#include "corral/os/wait.hpp"

#include <algorithm>
#include <thread>

namespace corral::os {

bool sleep_unless_stopped(std::chrono::milliseconds duration, const std::function<bool()>& stop) {
  using Clock = std::chrono::steady_clock;
  // A stop is noticed within a slice: quick enough for a person, cheap for the callback.
  constexpr std::chrono::milliseconds kSlice(50);
  const auto until = Clock::now() + duration;
  for (auto now = Clock::now(); now < until; now = Clock::now()) {
    if (stop && stop()) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(kSlice, until - now));
  }
  return !(stop && stop());
}

}  // namespace corral::os
