// Byte sizes as messages show them, the same in the host and in every plugin.
#pragma once

#include <cstdint>
#include <string>

namespace corral::sdk {

// "100 B", "1.5 KiB", "2.0 MiB", "1.25 GiB".
std::string format_size(std::uint64_t bytes);

}  // namespace corral::sdk
