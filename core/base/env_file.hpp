// Environment files (`--env-file`): the dotenv lines users keep beside their projects.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace corral {

// True when `name` can name an environment variable: [A-Za-z_][A-Za-z0-9_]*.
bool is_env_name(std::string_view name);

// The NAME=VALUE assignments of an environment file's `text`, in order. Blank lines and
// lines starting with '#' are skipped; `export ` may lead a line; a value in single
// quotes is taken as written, one in double quotes with \n, \t, \" and \\ read as
// escapes, a bare one up to a ` #` comment with its surrounding blanks trimmed. Nothing
// is expanded. Throws invalid-argument "WHERE:LINE: ..." for a line of another shape.
std::vector<std::pair<std::string, std::string>> parse_env_file(std::string_view text, const std::string& where);

}  // namespace corral
