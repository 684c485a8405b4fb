// One registry file: the YAML list of plugin libraries a user, an administrator or the
// package installed, checked as strictly as a provider spec. A typo must never change
// what runs or how: `sha265:` would silently drop a pin, `isolaton:` the isolation.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin_host/plugin_instance.hpp"

namespace corral {

// One entry of the `plugins:` list.
struct RegistryItem {
  std::filesystem::path library;  // resolved against the registry file's folder; empty when unknown
  std::string sha256;             // lower-case hex; "" when not pinned
  IsolationSettings isolation;
  // The plugin's verification record (`corral conformance --record`), resolved like the
  // library; empty: the default beside the plugin.
  std::filesystem::path record;
  std::optional<std::string> error;  // why the entry is refused ("registry FILE: the entry for X: ...")
};

// What a registry file says, or why it cannot be used as a whole.
struct RegistryText {
  std::vector<RegistryItem> items;
  std::optional<std::string> error;  // the file is not a registry (YAML error, no `plugins:` list, unknown key)
};

// Parses the text of the registry `file` (its folder anchors relative paths). Never
// throws: every problem is an error on the file or on one entry, naming the file, the
// entry, the key and the keys that exist.
RegistryText parse_registry(std::string_view text, const std::filesystem::path& file);

}  // namespace corral
