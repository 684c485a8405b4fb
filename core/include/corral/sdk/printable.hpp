// Text from outside (a provider's answer, a sandbox's labels, a file name) made safe for
// a terminal: control characters never reach it raw, so no escape sequence a provider
// returns can move the cursor, retitle the window or hide what corral printed.
#pragma once

#include <string>
#include <string_view>

namespace corral::sdk {

// `text` with C0 controls and DEL written as \xNN, C1 controls and the characters that
// reorder text (bidirectional controls such as U+202E, line and paragraph separators) as
// \uNNNN; newlines and tabs are kept when `multiline`, escaped otherwise.
std::string printable(std::string_view text, bool multiline = false);

}  // namespace corral::sdk
