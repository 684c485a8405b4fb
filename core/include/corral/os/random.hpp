// Random names from the operating system's generator (getrandom): lease ids, temporary
// names, and the tags a remote provider finds its own processes and sessions by. A name
// that met another's would touch the other's files or processes, so nothing here uses a
// seeded library generator.
//
// Threads: safe from any thread (getrandom has no state of corral's).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace corral::os {

// `bytes` random bytes; throws Error(internal) when the system generator fails.
std::string random_bytes(std::size_t bytes);

// `bytes` random bytes as lower-case hex; throws Error(internal) when the system generator fails.
std::string random_hex(std::size_t bytes);

// `prefix` followed by 16 random hex digits ("corral-" gives "corral-3f09c2d18e4b7a65").
std::string random_tag(std::string_view prefix);

}  // namespace corral::os
