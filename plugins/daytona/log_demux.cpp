#include "log_demux.hpp"

namespace corral::daytona {
namespace {

constexpr std::size_t kPrefixLength = 3;

// True when byte `b` can start a prefix (01 for stdout, 02 for stderr).
bool marks(char b) { return b == '\x01' || b == '\x02'; }

}  // namespace

void LogDemux::deliver(std::string_view bytes) { gathered_.append(bytes); }

void LogDemux::flush() {
  if (gathered_.empty()) return;
  (to_stderr_ ? err_ : out_)(gathered_);
  gathered_.clear();
}

void LogDemux::feed(std::string_view piece) {
  std::string joined;
  std::string_view data = piece;
  if (!held_.empty()) {
    joined = held_ + std::string(piece);
    held_.clear();
    data = joined;
  }
  std::size_t start = 0;  // first byte not yet delivered
  std::size_t i = 0;
  while (i < data.size()) {
    if (!marks(data[i])) {
      ++i;
      continue;
    }
    const char b = data[i];
    std::size_t n = 1;
    while (n < kPrefixLength && i + n < data.size() && data[i + n] == b) ++n;
    if (n == kPrefixLength) {
      deliver(data.substr(start, i - start));
      if (to_stderr_ != (b == '\x02')) flush();  // the other stream starts here
      to_stderr_ = b == '\x02';
      i += kPrefixLength;
      start = i;
    } else if (i + n == data.size()) {
      // The piece ends inside what may be a prefix: wait for the next one.
      deliver(data.substr(start, i - start));
      held_ = std::string(data.substr(i));
      flush();
      return;
    } else {
      i += n;
    }
  }
  deliver(data.substr(start));
  flush();
}

void LogDemux::finish() {
  std::string rest;
  rest.swap(held_);
  deliver(rest);
  flush();
}

}  // namespace corral::daytona
