// Finds provider plugins through YAML registry files and loads them. Later registries
// override earlier ones by provider name; a broken entry is kept with its error so the
// rest of corral stays usable.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loader.hpp"

namespace corral {

// One registry file and where it came from in the search order.
struct RegistrySource {
  std::filesystem::path file;
  std::string origin;  // shipped | system | user | CORRAL_REGISTRY
};

struct ProviderEntry {
  std::string name;                 // the provider name; for broken entries the file name
  std::filesystem::path library;    // the plugin library (empty for a broken registry file)
  RegistrySource source;            // the registry that listed it
  std::shared_ptr<const Plugin> plugin;
  std::optional<LoadError> error;
  std::vector<std::string> overridden;  // registries whose entry of the same name this replaced
  bool ok() const { return plugin != nullptr; }
};

class Registry {
 public:
  // The standard search order: shipped, /etc/corral/providers.d, the user's
  // providers.d, then each path of $CORRAL_REGISTRY (files or folders of *.yaml).
  static std::vector<RegistrySource> default_sources();
  // Reads every source in order and loads each listed plugin.
  static Registry load(const std::vector<RegistrySource>& sources);

  // Effective entries: loaded providers by name, then broken entries.
  const std::vector<ProviderEntry>& entries() const { return entries_; }
  // The loaded provider called `name` or having it as an alias, or nullptr.
  const ProviderEntry* find(std::string_view name) const;
  // A broken entry whose file name suggests `name` (to explain why it is not loaded).
  const ProviderEntry* find_broken(std::string_view name) const;
  // Names of the loaded providers, sorted.
  std::vector<std::string> names() const;
  const std::vector<RegistrySource>& sources() const { return sources_; }

 private:
  std::vector<RegistrySource> sources_;
  std::vector<ProviderEntry> entries_;
};

}  // namespace corral
