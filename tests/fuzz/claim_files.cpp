// Claim files are read back from the state folder, where anything may have been left (a
// crash, another version, a hand edit): any text becomes a claim or a corral::Error,
// nothing else, and a claim corral wrote reads back, and writes out as the same text
// from then on. (The first write may differ from what was read: bytes that are not UTF-8
// become U+FFFD, which can reorder the details' keys.)
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lease/claims.hpp"
#include "corral/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  corral::Claim claim;
  try {
    claim = corral::claim_from_json(text, "claim");
  } catch (const corral::Error&) {
    return 0;
  }
  const std::string written = corral::claim_to_json(claim);
  try {
    const std::string rewritten = corral::claim_to_json(corral::claim_from_json(written, "rewritten claim"));
    if (corral::claim_to_json(corral::claim_from_json(rewritten, "rewritten claim")) != rewritten) std::abort();
  } catch (const corral::Error&) {
    std::abort();  // corral wrote a claim it cannot read
  }
  return 0;
}
