// A digest of text a plugin must name without showing it: who a credential belongs to
// (Provider::target) without the credential. Part of the SDK's network library, which
// links OpenSSL.
#pragma once

#include <string>
#include <string_view>

namespace corral::sdk {

// The SHA-256 of `bytes`, 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace corral::sdk
