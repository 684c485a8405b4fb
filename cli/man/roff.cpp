#include "roff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace corral::cli::man {

std::string escape_chars(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // UTF-8 as groff's \[uXXXX]: roff input is read byte by byte otherwise.
      const int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
      unsigned code = c & (0x3fu >> extra);
      for (int k = 0; k < extra && i + 1 < text.size(); ++k) code = (code << 6) | (text[++i] & 0x3f);
      out += fmt::format("\\[u{:04X}]", code);
    }
  }
  return out;
}

std::string escape(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    out += escape_chars(std::string_view(&c, 1));
    line_start = c == '\n';
  }
  return out;
}

std::string heading(std::string_view name, int section, std::string_view version, std::string_view source) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  return fmt::format(".\\\" Generated from {}; edit that, not this page.\n.TH \"{}\" \"{}\" \"\" \"corral {}\" \"corral manual\"\n"
                     // Flags and identifiers read better whole than hyphenated or stretched.
                     ".nh\n.ad l\n",
                     source, escape(upper), section, version);
}

}  // namespace corral::cli::man
