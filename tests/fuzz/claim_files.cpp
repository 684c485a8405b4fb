// Claim files are read back from the state folder, where anything may have been left (a
// crash, another version, a hand edit): any text becomes a claim or a corral::Error,
// nothing else, and a claim read back writes out as text that reads back the same.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "claims.hpp"
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
    if (corral::claim_to_json(corral::claim_from_json(written, "rewritten claim")) != written) std::abort();
  } catch (const corral::Error&) {
    std::abort();  // corral wrote a claim it cannot read
  }
  return 0;
}
