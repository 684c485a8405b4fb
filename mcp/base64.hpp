// Base64 (RFC 4648, the standard alphabet) for the file tools, without OpenSSL: the host
// links no network or crypto library, and the SDK's codec needs one.
//
// Threads: free functions on values; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace corral::mcp {

std::string base64_encode(std::string_view bytes);
// The bytes `text` encodes (padding optional, no whitespace), or nullopt when it is not
// base64 of the standard alphabet.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace corral::mcp
