// Finds provider plugins through YAML registry files. Later registries override earlier
// ones by provider name; a broken entry is kept with its error so the rest of corral
// stays usable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugin_host/loader.hpp"
#include "plugin_host/plugin_instance.hpp"

namespace corral {

// One registry file and where it came from in the search order.
struct RegistrySource {
  std::filesystem::path file;
  std::string origin;  // shipped | system | user | CORRAL_REGISTRY
};

struct ProviderEntry {
  std::string name;               // the provider name; for broken entries the file name
  // A broken entry's provider: the name its spec gives when that much could be read, else
  // the one its file name suggests ("libcorral-acme.so": "acme"). What it answers to.
  std::string meant;
  std::filesystem::path library;  // the plugin library (empty for a broken registry file)
  RegistrySource source;          // the registry that listed it
  std::shared_ptr<const ProviderSpec> spec;  // set when ok(): what the plugin's probe reported
  std::string plugin_version;
  std::string sha256;  // the plugin file's, as listed (set when ok()): what a verification record must name
  std::uint32_t abi_version = 0;
  std::optional<LoadError> error;
  std::vector<std::string> overridden;  // registries whose entry of the same name this replaced
  IsolationSettings isolation;          // the entry's isolation, call-timeout and cancel-grace
  std::filesystem::path record;         // the registry's `record:`; empty: beside the plugin
  bool ok() const { return spec != nullptr; }
};

// What Registry::load does with a plugin file the spec cache does not know in its
// current form: probe it, or (never) list it as broken, not-probed, running no plugin code
// at all — shell completion reads the registry on every TAB.
enum class Probing { when_needed, never };

// Entries know their plugin's spec without its code running in this process: each plugin
// file is probed once in a child process and its spec cached (spec_cache.hpp); only the
// plugin a command opens is loaded here, by plugin(), once even when threads ask at once.
class Registry {
 public:
  // The standard search order: shipped, /etc/corral/providers.d, the user's
  // providers.d, then each path of $CORRAL_REGISTRY (files or folders of *.yaml).
  static std::vector<RegistrySource> default_sources();
  // Reads every source in order and learns each listed plugin's spec, probing only the
  // plugin files the spec cache does not know in their current form.
  static Registry load(const std::vector<RegistrySource>& sources, Probing probing = Probing::when_needed);

  // Effective entries: providers by name, then broken entries.
  const std::vector<ProviderEntry>& entries() const { return entries_; }
  // The working provider called `name` or having it as an alias, or nullptr.
  const ProviderEntry* find(std::string_view name) const;
  // The broken entry of provider `name` (as its spec or its file name says), or one whose
  // file name contains `name`, or nullptr: to explain why it is not loaded.
  const ProviderEntry* find_broken(std::string_view name) const;
  // The working provider `name`; throws ConfigError (78) with the load error when its
  // entry is broken, invalid-argument (64) listing the providers when there is none.
  const ProviderEntry& entry(std::string_view name) const;
  // Names of the working providers, sorted.
  std::vector<std::string> names() const;
  const std::vector<RegistrySource>& sources() const { return sources_; }

  // Loads the entry's library into this process, verifying it again (trust, checksum,
  // ABI, and that its spec is the probed one); throws corral::ConfigError with the
  // precise reason. Loaded once per entry.
  std::shared_ptr<const Plugin> plugin(const ProviderEntry& entry) const;

  // An unopened instance of the entry's plugin, run the way `entry.isolation` asks (a
  // copy of an entry may ask otherwise than the registry): loaded here (plugin()), or in a
  // helper process that loads it with the same checks and must describe it as its probe
  // did. Throws corral::ConfigError with the precise reason.
  std::unique_ptr<PluginInstance> instance(const ProviderEntry& entry) const;

 private:
  std::vector<RegistrySource> sources_;
  std::vector<ProviderEntry> entries_;
  // The index of `entry` (one of ours, or a copy of one) in entries_; throws if neither.
  size_t index_of(const ProviderEntry& entry) const;

  std::vector<std::string> pins_;  // entries_[i]'s sha256 pin, "" when not pinned
  mutable std::vector<std::shared_ptr<const Plugin>> plugins_;  // entries_[i]'s, once loaded
};

}  // namespace corral
