// corral's own exit codes (sysexits style), used when corral itself fails; otherwise a
// run exits with the command's exit code. Documented in docs/exit-codes.md.
#pragma once

#include "corral/types.hpp"

namespace corral {

inline constexpr int kExitUsage = 64;        // bad flags, options or input
inline constexpr int kExitNotFound = 66;     // no such lease, sandbox or template
inline constexpr int kExitUnavailable = 69;  // provider unreachable or failing
inline constexpr int kExitInternal = 70;     // a bug or an unexpected failure
inline constexpr int kExitQuota = 75;        // rate limit or quota: try again later
inline constexpr int kExitAuth = 77;         // credentials missing or refused
inline constexpr int kExitConfig = 78;       // broken config, registry or plugin
inline constexpr int kExitTimeout = 124;     // the command ran past --timeout
inline constexpr int kExitCancelled = 130;   // interrupted (Ctrl-C)

// The exit code for a failure of this kind.
int exit_code_for(ErrorCode code);

// A failure of configuration (registry, plugin or settings files): exit code 78.
class ConfigError : public Error {
 public:
  using Error::Error;
};

}  // namespace corral
