// Human-friendly lease names ("calm-otter") that are easy to type and say.
//
// Threads: make_slug() holds no state of its own; it is as safe to call at once as the
// `taken` and `random` it is given (the OS generator is). Slugs of leases being created
// at once are kept apart by ClaimStore::hold_new_slug() (claims.hpp), which calls it.
#pragma once

#include <functional>
#include <string>

namespace corral {

// A random adjective-noun slug for which `taken` is false; after a few collisions a
// numeric suffix is added, so this always returns. `random` returns uniform integers.
std::string make_slug(const std::function<bool(const std::string&)>& taken,
                      const std::function<unsigned(unsigned bound)>& random);

// make_slug with the OS random generator.
std::string make_slug(const std::function<bool(const std::string&)>& taken);

}  // namespace corral
