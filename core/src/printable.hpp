// Text from outside (a provider's answer, a sandbox's labels, a file name) made safe for
// a terminal: control characters never reach it raw, so no escape sequence a provider
// returns can move the cursor, retitle the window or hide what corral printed.
#pragma once

#include <string>
#include <string_view>

namespace corral {

// `text` with C0 controls, DEL and C1 controls written as \xNN (and a backslash as \\);
// newlines and tabs are kept when `multiline`, escaped otherwise.
std::string printable(std::string_view text, bool multiline = false);

}  // namespace corral
