// Bytes as lower-case hexadecimal text: digests, random names, and bytes JSON cannot carry.
#pragma once

#include <string>
#include <string_view>

namespace corral::sdk {

// Two lower-case hex digits per byte of `bytes`.
std::string hex_encode(std::string_view bytes);
// The bytes `text` (hex digits of either case, two per byte) stands for; false, with
// `out` unspecified, for an odd length or a character that is not a hex digit.
bool hex_decode(std::string_view text, std::string& out);

}  // namespace corral::sdk
