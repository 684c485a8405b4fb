#include "base/hash.hpp"

#include <nettle/sha2.h>

#include <fstream>
#include <vector>

#include "corral/sdk/hex.hpp"
#include "corral/types.hpp"

namespace corral {

// nettle, not OpenSSL: libarchive loads nettle anyway, and libcrypto's thousands of
// bind-now relocations were a large part of every corral command's start-up.
Sha256::Sha256() : ctx_(new sha256_ctx) { sha256_init(static_cast<sha256_ctx*>(ctx_)); }

Sha256::~Sha256() { delete static_cast<sha256_ctx*>(ctx_); }

void Sha256::update(std::string_view data) {
  sha256_update(static_cast<sha256_ctx*>(ctx_), data.size(), reinterpret_cast<const uint8_t*>(data.data()));
}

std::string Sha256::hex() {
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(static_cast<sha256_ctx*>(ctx_), sizeof digest, digest);
  return sdk::hex_encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::not_found, "cannot read " + path.string());
  Sha256 hasher;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hasher.update(std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
  }
  return hasher.hex();
}

}  // namespace corral
