#include "base/hash.hpp"

#include <nettle/sha2.h>
#include <sys/random.h>

#include <cerrno>
#include <fstream>
#include <vector>

#include "corral/types.hpp"

namespace corral {
namespace {

std::string to_hex(const unsigned char* data, size_t len) {
  static const char digits[] = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (size_t i = 0; i < len; ++i) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 0xf];
  }
  return out;
}

}  // namespace

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
  return to_hex(digest, sizeof digest);
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

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> data(bytes);
  for (size_t got = 0; got < bytes;) {
    ssize_t n = ::getrandom(data.data() + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(ErrorCode::internal, "the system random generator failed");
    got += static_cast<size_t>(n);
  }
  return to_hex(data.data(), bytes);
}

}  // namespace corral
