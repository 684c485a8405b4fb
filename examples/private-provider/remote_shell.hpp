// Quoting for the remote side of an ssh connection. ssh sends the remote command as one
// string that the account's login shell parses, so every argument that carries a path,
// a lease id, an environment value or the user's argv must be quoted here, never spliced.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace corral_ssh {

// `word` as one POSIX shell word that the shell reads back as exactly `word`: wrapped in
// single quotes, each ' written as '\''. Throws invalid-argument for a NUL byte, which
// no argument can carry.
std::string quote(std::string_view word);

// `argv` as a command line of quoted words separated by spaces (argv[0] included).
std::string command_line(const std::vector<std::string>& argv);

}  // namespace corral_ssh
