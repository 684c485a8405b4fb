#include "corral/sdk/digest.hpp"

#include <openssl/evp.h>

#include "corral/errors.hpp"
#include "corral/sdk/hex.hpp"

namespace corral::sdk {

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1)
    throw Error(ErrorCode::internal, "SHA-256 failed in OpenSSL");
  return hex_encode(std::string_view(reinterpret_cast<const char*>(digest), size));
}

}  // namespace corral::sdk
