#include "registry_fixture.hpp"

namespace corral::test {

std::string docs_plugin(const std::string& variant) {
  return std::string(CORRAL_DOCS_PLUGIN_DIR) + "/libcorral-docs-" + variant + ".so";
}

std::filesystem::path write_registry(const TempDir& dir, const std::string& name,
                                     const std::vector<std::string>& variants) {
  std::string text = "plugins:\n";
  for (const std::string& v : variants) text += "  - path: " + docs_plugin(v) + "\n";
  return dir.write(name + ".yaml", text);
}

Registry load_registry(const TempDir& dir, const std::vector<std::string>& variants) {
  return Registry::load({{write_registry(dir, "test-registry", variants), "CORRAL_REGISTRY"}});
}

}  // namespace corral::test
