#include "corral/types.hpp"

#include <cctype>

namespace corral {

std::int64_t parse_duration(std::string_view text) {
  auto bad = [&] {
    return Error(ErrorCode::invalid_argument,
                 "invalid duration '" + std::string(text) + "'",
                 "use seconds or units like 90s, 15m, 2h, 1h30m, 1d");
  };
  auto too_long = [&] {
    return Error(ErrorCode::invalid_argument,
                 "duration '" + std::string(text) + "' is too long: the maximum is " +
                     std::to_string(kMaxDurationSeconds / 86400) + "d (100 years)",
                 "use 0 for no timeout");
  };
  if (text.empty()) throw bad();
  std::int64_t total = 0;
  bool overflow = false;  // reported after the syntax check, so junk stays "invalid"
  int terms = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) throw bad();
    std::int64_t n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (n > kMaxDurationSeconds) overflow = true;  // n stays bounded: no int64 overflow
      else n = n * 10 + (text[i] - '0');
      ++i;
    }
    std::int64_t unit = 1;
    if (i < text.size()) {
      switch (text[i]) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        default: throw bad();
      }
      ++i;
    } else if (terms != 0) {
      throw bad();  // "1h30" is ambiguous
    }
    ++terms;
    if (overflow || n > (kMaxDurationSeconds - total) / unit) {
      overflow = true;
      continue;
    }
    total += n * unit;
  }
  if (overflow) throw too_long();
  return total;
}

std::string format_duration(std::int64_t seconds) {
  if (seconds <= 0) return "0s";
  if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  if (seconds > 3600 && seconds % 60 == 0)
    return std::to_string(seconds / 3600) + "h" + std::to_string(seconds % 3600 / 60) + "m";
  if (seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

}  // namespace corral
