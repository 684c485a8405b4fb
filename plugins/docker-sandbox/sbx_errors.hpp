// What a failed `sbx` invocation means for the user: the cause as a corral error code and
// a hint saying how to fix it. sbx documents no error format, so recognition is by the
// phrases its messages use, and anything unrecognised still names the failing command.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "corral/types.hpp"

namespace corral::docker_sandbox {

// The error for a known condition (not signed in, no virtualization, daemon down) that a
// failure-looking line of sbx's output reports, or nullopt. Passing check lines
// ("✓ kvm available") and lines that report no problem never count.
std::optional<Error> known_condition(std::string_view output);

// The error for `sbx <action>` exiting with `exit_code` after printing `output`:
// a known condition when there is one, else the gist of sbx's own message.
Error sbx_failed(std::string_view action, int exit_code, std::string_view output);

// The sbx executable `cli` cannot be found or run.
Error sbx_missing(const std::string& cli);

// `sbx <action>` did not finish within `seconds`: unavailable, the sandbox daemon stuck.
Error sbx_timed_out(std::string_view action, long seconds);

// The most telling line of sbx's output (the last one mentioning an error, else the
// last non-empty one), at most 300 characters.
std::string gist(std::string_view output);

}  // namespace corral::docker_sandbox
