#include "output_decoder.hpp"

#include <cstdio>

#include "corral/errors.hpp"
#include "corral/sdk/base64.hpp"

namespace corral::daytona {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string shown(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", u);
  return buf;
}

}  // namespace

void OutputDecoder::garbled(const std::string& why) const {
  throw Error(ErrorCode::internal,
              what_ + ": the output arrived garbled: " + why + " at character " + std::to_string(offset_) +
                  " of the encoded stream",
              "corral encodes output in the sandbox with sh, dd and base64 (or od); check that the sandbox image "
              "has them, and report this with the image's name");
}

void OutputDecoder::feed(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  auto fail = [&](const std::string& why) {
    if (!out.empty()) sink_(out);  // what came before the damage is output
    garbled(why);
  };
  for (char c : text) {
    ++offset_;
    if (c == '\n') {
      if (line_ == Line::hex && digits_ != 0) fail("a hex line ends inside a byte");
      line_ = Line::start;
      continue;
    }
    if (line_ == Line::start) {
      if (c == ' ') {
        if (digits_ != 0) fail("a hex line starts inside a base64 group");
        line_ = Line::hex;
        continue;
      }
      line_ = Line::base64;
    }
    if (line_ == Line::hex) {
      if (c == ' ') {
        if (digits_ != 0) fail("a space inside a hex byte");
        continue;
      }
      const int v = hex_value(c);
      if (v < 0) fail(shown(c) + " in a hex line");
      bits_ = bits_ << 4 | static_cast<std::uint32_t>(v);
      if (++digits_ == 2) {
        out += static_cast<char>(bits_);
        bits_ = 0;
        digits_ = 0;
      }
      continue;
    }
    if (c == '=') {
      if (digits_ < 2) fail("'=' too early in a base64 group");
      ++padding_;
      bits_ <<= 6;
    } else {
      const int v = sdk::base64_digit(c);
      if (v < 0) fail(shown(c) + " in a base64 line");
      if (padding_ > 0) fail(shown(c) + " after '=' in a base64 group");
      bits_ = bits_ << 6 | static_cast<std::uint32_t>(v);
    }
    if (++digits_ == 4) {
      for (int i = 0; i < 3 - padding_; ++i) out += static_cast<char>(bits_ >> (16 - 8 * i) & 0xff);
      bits_ = 0;
      digits_ = 0;
      padding_ = 0;
    }
  }
  if (!out.empty()) sink_(out);
}

void OutputDecoder::finish() {
  if (digits_ != 0) garbled("the stream ends inside an encoded byte");
  line_ = Line::start;
}

}  // namespace corral::daytona
