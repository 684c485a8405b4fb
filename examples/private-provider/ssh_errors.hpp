// What a failed ssh connection means for the user: the cause as a corral error code and a
// hint that says how to fix it, recognised from the messages OpenSSH writes to its log.
#pragma once

#include <string>
#include <string_view>

#include <corral/errors.hpp>

namespace corral_ssh {

struct Settings;

// The error for an ssh client that exited 255 after logging `ssh_log` while trying to
// `action` ("run the command") on the host of `settings`. Never includes secrets: ssh's
// log names files and hosts, not key material.
corral::Error ssh_failed(std::string_view action, std::string_view ssh_log, const Settings& settings);

// The most telling line of ssh's log or a script's stderr: the last one that is not part
// of a '@' banner, at most 300 characters.
std::string gist(std::string_view text);

}  // namespace corral_ssh
