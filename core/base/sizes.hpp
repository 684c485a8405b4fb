// Byte sizes as users write them (--max-workspace 512M) and as messages show them.
#pragma once

#include <cstdint>
#include <string>

#include "corral/sdk/sizes.hpp"

namespace corral {

// Parses "512M", "2G", "100k" or plain bytes; throws invalid-argument, also for a size
// beyond 2^64-1 bytes rather than letting it wrap (to 0, "no limit").
std::uint64_t parse_size(const std::string& text);
// "1.5 MiB" style text for messages (the SDK's, which plugins use too).
using sdk::format_size;

}  // namespace corral
