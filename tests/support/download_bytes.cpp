#include "download_bytes.hpp"

#include <doctest/doctest.h>

#include <cstdint>

#include "corral/os/process.hpp"

namespace corral::test {

std::string binary_bytes(std::size_t size) {
  std::string out;
  for (int i = 0; i < 256; ++i) out += static_cast<char>(i);
  std::uint32_t x = 2463534242u;
  while (out.size() < size) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    out += static_cast<char>(x & 0xff);
  }
  return out;
}

void unpack(const std::string& archive, const TempDir& into) {
  os::ProcessSpec spec;
  spec.argv = {"tar", "-xzf", archive, "-C", into.str()};
  REQUIRE(os::capture_process(spec, 30).exit_code == 0);
}

}  // namespace corral::test
