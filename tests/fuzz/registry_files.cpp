// A registry file decides which code corral loads: any text is a list of entries, each a
// library with its pin and isolation or an error naming why it is refused, or an error
// on the whole file. Never an exception, and never an entry both loadable and refused.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "plugin_host/registry_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  corral::RegistryText parsed = corral::parse_registry(text, "/etc/corral/providers.d/fuzz.yaml");
  if (parsed.error && !parsed.items.empty()) std::abort();  // a refused file lists nothing
  for (const corral::RegistryItem& item : parsed.items) {
    if (item.error) continue;
    // A loadable entry names a library, anchored to the file's folder when relative, and a
    // pin that is either absent or 64 lower-case hex digits.
    if (item.library.empty() || !item.library.is_absolute()) std::abort();
    if (!item.sha256.empty() &&
        (item.sha256.size() != 64 || item.sha256.find_first_not_of("0123456789abcdef") != std::string::npos))
      std::abort();
  }
  return 0;
}
