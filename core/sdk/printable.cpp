#include "corral/sdk/printable.hpp"

#include <cstdint>
#include <cstdio>

namespace corral::sdk {
namespace {

// The code point of the UTF-8 sequence at `text[i]` when it is a bidirectional control
// (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) or a line or paragraph separator
// (U+2028, U+2029): they reorder or break what a terminal shows, so a name can read as
// another ("Trojan Source"). 0 otherwise; `length` gets the sequence's length.
char32_t reordering_control(std::string_view text, size_t i, size_t& length) {
  auto byte = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  if (byte(0) == 0xD8 && byte(1) == 0x9C) {
    length = 2;
    return 0x061C;
  }
  if (byte(0) != 0xE2 || (byte(1) != 0x80 && byte(1) != 0x81) || byte(2) < 0x80 || byte(2) > 0xBF) return 0;
  const char32_t cp = 0x2000 + ((byte(1) & 0x3F) << 6) + (byte(2) & 0x3F);
  const bool reorders = cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
  length = 3;
  return reorders ? cp : 0;
}

// Appends `format` filled with `value` (a \x or \u escape) to `out`.
void append_escape(std::string& out, const char* format, unsigned value) {
  char buffer[16];
  const int n = std::snprintf(buffer, sizeof buffer, format, value);
  if (n > 0) out.append(buffer, static_cast<size_t>(n));
}

}  // namespace

std::string printable(std::string_view text, bool multiline) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (multiline && (c == '\n' || c == '\t')) {
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      append_escape(out, "\\x%02x", c);
    } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      // U+0080..U+009F: the C1 controls, CSI (U+009B) among them.
      append_escape(out, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      ++i;
    } else if (size_t length = 0; char32_t cp = reordering_control(text, i, length)) {
      append_escape(out, "\\u%04x", static_cast<unsigned>(cp));
      i += length - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace corral::sdk
