// Human-friendly lease names ("calm-otter") that are easy to type and say.
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
