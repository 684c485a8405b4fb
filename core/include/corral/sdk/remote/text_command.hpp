// A command for a provider whose API carries it as text (JSON strings, which must be
// UTF-8): what it cannot carry is refused before anything runs, never changed on the way.
#pragma once

#include <string_view>

#include "corral/types.hpp"

namespace corral::sdk::remote {

// Throws invalid-argument, naming the argument (or variable, or folder) and `provider`
// ("E2B"), when a part of `command` that the API sends as text is not valid UTF-8: JSON
// would turn its bad bytes into U+FFFD, and the command would run with other arguments.
void require_text_command(const Command& command, std::string_view provider);

}  // namespace corral::sdk::remote
