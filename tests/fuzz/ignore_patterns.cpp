// .corralignore comes from the repository: any text compiles or is refused with
// corral::Error, and matching stays linear (libFuzzer's -timeout catches a blow-up).
// The input is "patterns\0path".
#include <cstdint>
#include <string_view>

#include "corral/errors.hpp"
#include "workspace/ignore.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  std::string_view patterns = input.substr(0, split);
  std::string_view path = split == std::string_view::npos ? "src/main.c" : input.substr(split + 1);
  try {
    corral::IgnoreRules rules = corral::IgnoreRules::parse(patterns);
    (void)rules.ignored(path, false);
    (void)rules.ignored(path, true);
  } catch (const corral::Error&) {
  }
  return 0;
}
