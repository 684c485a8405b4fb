// A repository's corral.yaml is untrusted: any text is a config of the right shape or a
// ConfigError (or YAML's own parse error, which corral turns into one); nothing else.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

#include "settings/config.hpp"
#include "corral/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    corral::ConfigFile file{"corral.yaml", YAML::Load(text)};
    corral::Config config = corral::Config::from(std::nullopt, file);
    (void)config.provider();
    (void)config.env_names();
    (void)config.option("e2b", "template");
    (void)config.option_keys("e2b");
  } catch (const YAML::Exception&) {
  } catch (const corral::Error&) {
  }
  return 0;
}
