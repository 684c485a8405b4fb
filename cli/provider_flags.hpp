// Plugin options on the command line: `--<provider>-<option> VALUE` (or `=VALUE`) for
// any loaded provider, taken out of argv before the fixed flags are parsed.
#pragma once

#include <string>
#include <vector>

#include "corral/types.hpp"
#include "plugin_host/registry.hpp"

namespace corral::cli {

// Removes provider option flags from `args` (up to a "--") and returns them keyed
// "<provider>.<option>". A flag naming a provider but none of its options is an error
// listing the valid ones; `reserved` are corral's own flags, never taken.
StringMap take_provider_flags(std::vector<std::string>& args, const Registry& registry,
                              const std::vector<std::string>& reserved);

// Throws the usage error for provider option flags given to `command`, which takes none,
// naming the first of `flags`: what take_provider_flags took with `registry`, not empty.
[[noreturn]] void refuse_provider_flags(const StringMap& flags, const Registry& registry, const std::string& command);

}  // namespace corral::cli
