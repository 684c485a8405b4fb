// Bytes as lower-case hexadecimal text: digests and random names.
#pragma once

#include <string>
#include <string_view>

namespace corral::sdk {

// Two lower-case hex digits per byte of `bytes`.
std::string hex_encode(std::string_view bytes);

}  // namespace corral::sdk
