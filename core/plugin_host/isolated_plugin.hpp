// A plugin instance that lives in a helper process (corral-plugin-host), reached over a
// socket with the frames of plugin_channel.hpp: a crash, a runaway exception or a hang in
// the plugin costs the helper, never corral, and becomes a clear corral::Error.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "plugin_host/plugin_instance.hpp"

namespace corral {

// The helper executable: <prefix>/libexec/corral/corral-plugin-host beside the running
// corral's <prefix>/bin (the build tree mirrors it).
std::filesystem::path plugin_host_path();

// What the helper reported about the plugin it loaded, to compare with the probe's.
struct HelperHello {
  std::string spec_json;
  std::string plugin_version;
  std::uint32_t abi_version = 0;
};

// Starts the helper on `library`, which loads it with load_plugin (trust checks and the
// sha256 `pin`, "" = none) and says hello; `hello` receives what it reported. Throws
// ConfigError when the helper cannot load it, corral::Error when it cannot be started,
// crashes or hangs. The helper dies with corral (PR_SET_PDEATHSIG, and EOF on its socket).
std::unique_ptr<PluginInstance> isolated_instance(const std::filesystem::path& library, const std::string& pin,
                                                  const IsolationSettings& settings, HelperHello& hello);

}  // namespace corral
