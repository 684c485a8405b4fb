// The checks a remote provider runs on its settings when it opens, before anything
// reaches the network: its endpoint, the sandbox folder every sync unpacks over, the
// user commands run as, and its time limits. Each refusal is Error(invalid_argument)
// naming the value and, in the hint, the setting to change.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "corral/sdk.hpp"
#include "corral/sdk/remote/identity.hpp"

namespace corral::sdk::remote {

// `text` without its trailing slashes ("/" stays "/").
std::string without_trailing_slash(std::string text);

// URL option `option` (else `fallback`) without trailing slashes; refused naming its variable unless check_url passes.
std::string url_option(const Options& options, const Identity& provider, std::string_view option,
                       const std::string& fallback);

// Refuses `path` as the workdir (option `workdir`) unless workdir_problem accepts it; the hint offers `examples`.
void check_workdir(const Identity& provider, const std::string& path, bool relative_ok, std::string_view examples);

// Refuses `user` (option `user`) unless a POSIX user name (no '/' or "..", 32 at most); the hint offers `examples`.
void check_user(const Identity& provider, const std::string& user, std::string_view examples);

// Seconds of duration option `option` (else `fallback`), refused naming its setting unless within [min_seconds, 1 day].
std::int64_t time_limit(const Options& options, const Identity& provider, std::string_view option,
                        std::int64_t fallback, std::int64_t min_seconds = 1);

// Seconds of the sandbox lifetime option `option` (else `fallback`), refused naming it unless
// positive and below 68 years (the providers' 32-bit seconds).
std::int64_t lifetime_option(const Options& options, const Identity& provider, std::string_view option,
                             std::int64_t fallback);

}  // namespace corral::sdk::remote
