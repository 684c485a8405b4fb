// An option's default may name a per-user folder, as XDG base directories, so a provider
// that keeps files on this machine needs no setting to work: a `path` option's default
// "${XDG_STATE_HOME}/acme" is $XDG_STATE_HOME/acme, or ~/.local/state/acme when that
// variable is unset or not absolute (the XDG rule). ${XDG_CONFIG_HOME} (~/.config) and
// ${XDG_CACHE_HOME} (~/.cache) work alike, only at the start of the default.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "corral/types.hpp"

namespace corral {

// Reads an environment variable; nullopt when it is unset.
using EnvFn = std::function<std::optional<std::string>(const std::string&)>;

// The XDG folder variable `name` ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
// names: its value when absolute, else $HOME (or /) with the XDG fallback.
std::filesystem::path xdg_folder(std::string_view name, const EnvFn& env);

// Refuses (invalid-argument, naming the option) a default that uses "${" other than as
// one of the XDG folders at its very start followed by "/" or nothing, or uses one in an
// option whose type is not `path`.
void check_option_default(const OptionSpec& option);

// `value` with a leading XDG folder expanded (check_option_default's syntax); anything
// else unchanged.
std::string expand_option_default(const std::string& value, const EnvFn& env);

}  // namespace corral
