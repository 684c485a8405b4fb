#include "corral/types.hpp"

#include <cctype>

namespace corral {

namespace {

// `text` in milliseconds: terms of digits and a unit (ms, s, m, h, d; a lone last number
// is seconds); with `fractions`, a term may be a decimal ("1.5s") and "ms" is a unit.
std::int64_t parse_terms(std::string_view text, bool fractions) {
  auto bad = [&] {
    return Error(ErrorCode::invalid_argument, "invalid duration '" + std::string(text) + "'",
                 fractions ? "use seconds or units like 500ms, 1.5s, 90s, 15m, 2h, 1h30m"
                           : "use seconds or units like 90s, 15m, 2h, 1h30m, 1d");
  };
  auto too_long = [&] {
    return Error(ErrorCode::invalid_argument,
                 "duration '" + std::string(text) + "' is too long: the maximum is " +
                     std::to_string(kMaxDurationSeconds / 86400) + "d (100 years)",
                 "use 0 for no timeout");
  };
  constexpr std::int64_t kMaxMs = kMaxDurationSeconds * 1000;
  if (text.empty()) throw bad();
  std::int64_t total = 0;
  bool overflow = false;  // reported after the syntax check, so junk stays "invalid"
  int terms = 0;
  size_t i = 0;
  auto digits = [&](std::int64_t& n, int& count) {
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++count) {
      if (n > kMaxMs) overflow = true;  // n stays bounded: no int64 overflow
      else n = n * 10 + (text[i] - '0');
    }
  };
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) throw bad();
    std::int64_t whole = 0, fraction = 0, scale = 1;
    int count = 0, places = 0;
    digits(whole, count);
    if (fractions && i < text.size() && text[i] == '.') {
      ++i;
      std::int64_t f = 0;
      digits(f, places);
      if (places == 0 || places > 3) throw bad();  // a millisecond is as fine as it gets
      fraction = f;
      for (int p = 0; p < places; ++p) scale *= 10;
    }
    std::int64_t unit = 1000;
    if (i < text.size()) {
      if (fractions && text.substr(i, 2) == "ms") {
        unit = 1;
        ++i;
      } else {
        switch (text[i]) {
          case 's': unit = 1000; break;
          case 'm': unit = 60'000; break;
          case 'h': unit = 3'600'000; break;
          case 'd': unit = 86'400'000; break;
          default: throw bad();
        }
      }
      ++i;
    } else if (terms != 0) {
      throw bad();  // "1h30" is ambiguous
    }
    ++terms;
    if (fraction != 0 && unit * fraction % scale != 0) throw bad();  // "1.5ms": finer than a millisecond
    if (overflow || whole > (kMaxMs - total) / unit) {
      overflow = true;
      continue;
    }
    total += whole * unit + unit * fraction / scale;
  }
  if (overflow || total > kMaxMs) throw too_long();
  return total;
}

}  // namespace

std::int64_t parse_duration(std::string_view text) { return parse_terms(text, false) / 1000; }

std::int64_t parse_duration_ms(std::string_view text) { return parse_terms(text, true); }

void set_timeout(Command& command, std::int64_t ms) {
  command.timeout_ms = ms;
  command.timeout_seconds = (ms + 999) / 1000;
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
