#include "corral/sdk/base64.hpp"

#include <openssl/evp.h>

#include "corral/types.hpp"

namespace corral::sdk {

namespace {

// EVP_DecodeBlock's output length, or -1 for input that is not padded standard base64.
int decode_block(std::string_view text, std::string& out) {
  out.resize(text.size() / 4 * 3);
  if (text.empty()) return 0;
  return EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                         reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
}

}  // namespace

void base64_decode(std::string_view text, std::string& out) {
  // The fast path is what proto3 JSON writers emit: standard alphabet, padded. Anything
  // else (URL-safe alphabet, no padding) is normalised in a copy and decoded again.
  int n = text.size() % 4 == 0 ? decode_block(text, out) : -1;
  std::string normalised;
  if (n < 0) {
    normalised.assign(text);
    for (char& c : normalised) {
      if (c == '-') c = '+';
      else if (c == '_') c = '/';
    }
    while (normalised.size() % 4 != 0) normalised += '=';
    text = normalised;
    n = decode_block(text, out);
  }
  if (n < 0) throw Error(ErrorCode::unavailable, "envd sent output that is not valid base64");
  // EVP_DecodeBlock counts the padding as zero bytes; drop them.
  size_t pad = 0;
  if (!text.empty() && text.back() == '=') ++pad;
  if (text.size() > 1 && text[text.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
}

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace corral::sdk
