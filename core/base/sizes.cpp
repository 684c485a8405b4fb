#include "base/sizes.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>

#include "corral/errors.hpp"

namespace corral {

std::uint64_t parse_size(const std::string& text) {
  auto bad = [&] {
    return Error(ErrorCode::invalid_argument, fmt::format("invalid size '{}'", text), "use bytes or 500k, 200M, 2G");
  };
  std::size_t used = 0;
  std::uint64_t n = 0;
  bool overflow = false;
  for (; used < text.size() && std::isdigit(static_cast<unsigned char>(text[used])); ++used) {
    const unsigned digit = static_cast<unsigned>(text[used] - '0');
    if (n > (UINT64_MAX - digit) / 10) overflow = true;  // keep scanning: the unit names the maximum
    n = n * 10 + digit;
  }
  if (used == 0) throw bad();
  std::string unit = text.substr(used);
  const std::string shown_unit = unit;
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  unsigned shift = 0;
  if (!unit.empty()) {
    if (unit.size() != 1 && !(unit.size() == 2 && unit[1] == 'i')) throw bad();
    switch (std::tolower(static_cast<unsigned char>(unit[0]))) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: throw bad();
    }
    if (unit.size() == 2 && !std::isupper(static_cast<unsigned char>(unit[0]))) throw bad();  // "Ki", not "ki"
  }
  const std::uint64_t max = UINT64_MAX >> shift;
  if (overflow || n > max)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("size '{}' is too large: the maximum is {}{} (2^64-1 bytes)", text, max, shown_unit),
                "use 0 for no limit");
  return n << shift;
}

}  // namespace corral
