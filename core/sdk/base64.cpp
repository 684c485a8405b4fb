#include "corral/sdk/base64.hpp"

#include <array>
#include <cstdint>

#include "corral/errors.hpp"

namespace corral::sdk {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Digit values of the standard alphabet (-1 elsewhere); with `url_safe`, '-' and '_' too.
constexpr std::array<std::int8_t, 256> digit_table(bool url_safe) {
  std::array<std::int8_t, 256> v{};
  v.fill(-1);
  for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  if (url_safe) {
    v['-'] = 62;
    v['_'] = 63;
  }
  return v;
}
constexpr std::array<std::int8_t, 256> kStandard = digit_table(false);
constexpr std::array<std::int8_t, 256> kStandardOrUrl = digit_table(true);

// Decodes `text` (padding optional) into `out` with `digits`; false on any character
// outside them, a length no encoder writes, or (when `strict`) stray bits after the last byte.
bool decode(std::string_view text, const std::array<std::int8_t, 256>& digits, bool strict, std::string& out) {
  std::size_t padding = 0;
  while (!text.empty() && text.back() == '=' && padding < 2) {
    text.remove_suffix(1);
    ++padding;
  }
  if (text.size() % 4 == 1 || (padding > 0 && (text.size() + padding) % 4 != 0)) return false;
  out.resize(text.size() / 4 * 3 + (text.size() % 4 == 0 ? 0 : text.size() % 4 - 1));
  // The value of text[i] in the top bits of a 24-bit group at `slot` (0..3); -1 sets the sign.
  auto at = [&](std::size_t i, int slot) -> std::int32_t {
    const std::int32_t v = digits[static_cast<unsigned char>(text[i])];
    return v < 0 ? -1 : v << (18 - 6 * slot);
  };
  std::size_t i = 0;
  std::size_t o = 0;
  for (; i + 4 <= text.size(); i += 4) {
    const std::int32_t n = at(i, 0) | at(i + 1, 1) | at(i + 2, 2) | at(i + 3, 3);
    if (n < 0) return false;
    out[o++] = static_cast<char>(n >> 16);
    out[o++] = static_cast<char>(n >> 8);
    out[o++] = static_cast<char>(n);
  }
  if (const std::size_t rest = text.size() - i; rest > 0) {  // 2 or 3 digits: 1 or 2 bytes
    const std::int32_t n = at(i, 0) | at(i + 1, 1) | (rest == 3 ? at(i + 2, 2) : 0);
    if (n < 0) return false;
    // The bits below the last whole byte: an encoder leaves them zero.
    const std::int32_t stray = n & (rest == 2 ? 0xFFFF : 0xFF);
    if (strict && stray != 0) return false;
    out[o++] = static_cast<char>(n >> 16);
    if (rest == 3) out[o++] = static_cast<char>(n >> 8);
  }
  return true;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  std::size_t i = 0;
  std::size_t o = 0;
  auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out[o++] = kAlphabet[n >> 18];
    out[o++] = kAlphabet[(n >> 12) & 63];
    out[o++] = kAlphabet[(n >> 6) & 63];
    out[o++] = kAlphabet[n & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {  // the '=' already stand after it
    const std::uint32_t n = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    out[o++] = kAlphabet[n >> 18];
    out[o++] = kAlphabet[(n >> 12) & 63];
    if (rest == 2) out[o] = kAlphabet[(n >> 6) & 63];
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  if (!decode(text, kStandard, /*strict=*/true, out)) return std::nullopt;
  return out;
}

void base64_decode_lenient(std::string_view text, std::string& out, std::string_view what) {
  if (!decode(text, kStandardOrUrl, /*strict=*/false, out))
    throw Error(ErrorCode::unavailable, std::string(what) + " that is not valid base64");
}

int base64_digit(char c) { return kStandard[static_cast<unsigned char>(c)]; }

}  // namespace corral::sdk
