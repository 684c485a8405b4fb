// Registries made of the docs test plugins (built into CORRAL_DOCS_PLUGIN_DIR).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cli.hpp"
#include "plugin_host/registry.hpp"

namespace corral::test {

// The good test providers, one per feature combination.
inline const std::vector<std::string> kGoodProviders = {"cloudbox", "mountbox", "barebox", "hybridbox"};

// The library of the docs test plugin `variant` ("cloudbox", "incomplete", ...).
std::string docs_plugin(const std::string& variant);

// Writes `<dir>/<name>.yaml` listing the given test plugins and returns its path.
std::filesystem::path write_registry(const TempDir& dir, const std::string& name,
                                     const std::vector<std::string>& variants);

// A registry that reads only the one file listing `variants` (nothing installed).
Registry load_registry(const TempDir& dir, const std::vector<std::string>& variants);

}  // namespace corral::test
