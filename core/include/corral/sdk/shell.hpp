// Words for a POSIX shell: how plugins build the one command line a remote sandbox runs
// through `sh -c` without a word of the user's being read as shell syntax.
#pragma once

#include <string>
#include <string_view>

namespace corral::sdk {

// `word` as one shell word, taken literally by any POSIX sh: plain words as they are,
// others in single quotes (a ' inside becomes '\''). Throws invalid-argument for a NUL
// byte, which no shell word can hold.
std::string shell_quote(std::string_view word);

}  // namespace corral::sdk
