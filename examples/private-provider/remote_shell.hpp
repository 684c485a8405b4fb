// Quoting for the remote side of an ssh connection. ssh sends the remote command as one
// string that the account's login shell parses, so every argument that carries a path,
// a lease id, an environment value or the user's argv must be quoted here, never spliced.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace corral_ssh {

// `argv` as a command line of words separated by spaces (argv[0] included), each quoted
// with the SDK's sdk::shell_quote: a NUL byte throws invalid-argument.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace corral_ssh
