// `sbx ls --json` output is another program's text whose format may change: any bytes
// parse into entries or are refused with corral::Error, never a crash.
#include <cstdint>
#include <string_view>

#include "corral/errors.hpp"
#include "sbx_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto entries = corral::docker_sandbox::parse_ls_json(text);
    (void)corral::docker_sandbox::find_entry(entries, "corral-x-0123456789ab");
  } catch (const corral::Error&) {
  }
  return 0;
}
