// What a plugin answers and what it declares: every primitive's result as the host reads
// it, and a provider spec as the loader validates it. Any text either parses or throws
// corral::Error; a parsed answer survives being written back and read again unchanged.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "corral/errors.hpp"
#include "corral/json.hpp"
#include "corral/wire.hpp"

namespace {

template <class T>
void answer(std::string_view text) {
  try {
    T parsed = corral::wire::read<T>(text, "fuzz input");
    (void)parsed;
  } catch (const corral::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  answer<corral::Sandbox>(text);
  answer<corral::ExecResult>(text);
  answer<corral::wire::ListResult>(text);
  answer<corral::wire::DoctorResult>(text);
  answer<corral::wire::UrlResult>(text);
  try {
    corral::Sandbox s = corral::wire::read<corral::Sandbox>(text, "fuzz input");
    const std::string again = corral::json::to_json(s, /*include_secrets=*/true);
    if (corral::json::to_json(corral::wire::read<corral::Sandbox>(again, "round trip"), true) != again) std::abort();
  } catch (const corral::Error&) {
  }
  try {
    corral::ProviderSpec spec = corral::json::spec_from_json(text);
    (void)corral::json::to_json(spec);
  } catch (const corral::Error&) {
  }
  return 0;
}
