// `--id` is user input that names a file under the lease folder: any text is refused as
// invalid or looked up inside that folder only, never elsewhere.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "lease/claims.hpp"
#include "corral/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A folder that does not exist: a lookup that stayed inside it finds nothing, so any
  // claim found came from somewhere else.
  static const corral::ClaimStore store(std::filesystem::temp_directory_path() / "corral-fuzz-no-such-dir");
  const std::string id(reinterpret_cast<const char*>(data), size);
  try {
    if (store.inspect(id)) std::abort();
  } catch (const corral::Error& e) {
    if (e.code() != corral::ErrorCode::invalid_argument) std::abort();
  }
  try {
    (void)store.resolve(id);
    std::abort();  // nothing exists to resolve to
  } catch (const corral::Error& e) {
    if (e.code() != corral::ErrorCode::invalid_argument && e.code() != corral::ErrorCode::not_found) std::abort();
  }
  return 0;
}
