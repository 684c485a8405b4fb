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

}  // namespace corral::cli
