// The command that stops a lease, as every message and the session handle quote it.
//
// Threads: a pure function; safe anywhere.
#pragma once

#include <string>

namespace corral {

// `corral stop --provider P --id L`, with each word quoted for a POSIX shell as needed;
// without --provider when `provider` is empty (a corrupt claim's is not to be trusted).
std::string cleanup_command(const std::string& provider, const std::string& lease_id);

}  // namespace corral
