// The completion scripts `corral completion SHELL` prints. They hold no list of commands,
// flags or providers: on each TAB they ask `corral __complete -- WORDS...`, so what they
// offer follows the installed corral and its plugins.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace corral::cli {

// The shells there is a script for, in the order messages name them.
const std::vector<std::string_view>& completion_shells();
// The script for `shell`, or nullopt when there is none.
std::optional<std::string_view> completion_script(std::string_view shell);

}  // namespace corral::cli
