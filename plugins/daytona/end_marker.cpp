#include "end_marker.hpp"

#include <random>

namespace corral::daytona {

std::string new_end_marker() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string out = "\x1f" "corral-end-";
  for (int i = 0; i < 24; ++i) out += hex[rng() % 16];
  return out + "\x1f";
}

void EndMarkerFilter::feed(std::string_view data) {
  if (data.empty()) return;
  held_.append(data);
  // The longest tail of held_ that is a prefix of the ending stays; the rest is output.
  std::size_t keep = std::min(held_.size(), ending_.size());
  while (keep > 0 && held_.compare(held_.size() - keep, keep, ending_, 0, keep) != 0) --keep;
  if (held_.size() > keep) {
    sink_(std::string_view(held_).substr(0, held_.size() - keep));
    held_.erase(0, held_.size() - keep);
  }
}

bool EndMarkerFilter::finish() {
  const bool complete = held_ == ending_;
  if (!complete && !held_.empty()) sink_(held_);
  held_.clear();
  return complete;
}

}  // namespace corral::daytona
