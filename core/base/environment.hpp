// Reading environment variables through a seam: settings, folders and providers take an
// EnvLookup, so a test can give them an environment of its own.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace corral {

// A variable's value, or nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
// The process environment, as an EnvLookup.
std::optional<std::string> process_env(const std::string& name);

}  // namespace corral
