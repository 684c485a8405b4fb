// Writing man(7) roff: text made safe to put on a line, and the page heading every page
// starts with.
#pragma once

#include <string>
#include <string_view>

namespace corral::cli::man {

// `text` as roff prints it literally: backslashes escaped and "-" as \- (so flags copied
// from the page are the ASCII ones).
std::string escape_chars(std::string_view text);
// escape_chars(text) with each line that starts with "." or "'" guarded, so no line of
// it is read as a request.
std::string escape(std::string_view text);
// The .TH line, a comment saying where the page comes from, and no hyphenation or
// justification.
std::string heading(std::string_view name, int section, std::string_view version, std::string_view source);

}  // namespace corral::cli::man
