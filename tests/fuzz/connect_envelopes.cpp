// The Connect envelope decoder (E2B's process streams): any bytes, fed in any chunking,
// either decode or fail with corral::Error; the end-of-stream payload parser likewise.
#include <cstdint>
#include <string_view>

#include "corral/errors.hpp"
#include "corral/sdk/connect.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the chunk size, so the fuzzer explores splits across headers.
  const std::size_t chunk = 1 + data[0] % 64;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  corral::sdk::connect::Decoder decoder(1 << 16);
  try {
    for (std::size_t at = 0; at < input.size(); at += chunk)
      decoder.feed(input.substr(at, chunk), [](corral::sdk::connect::Message& m) {
        if (m.end_stream()) (void)corral::sdk::connect::end_stream_error(m.payload);
      });
  } catch (const corral::Error&) {
    // a refusal is a correct answer to hostile bytes
  }
  (void)corral::sdk::connect::end_stream_error(input.substr(0, 0));
  try {
    (void)corral::sdk::connect::end_stream_error(input);
  } catch (const corral::Error&) {
  }
  return 0;
}
