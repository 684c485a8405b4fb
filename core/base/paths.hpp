// Where corral keeps and finds things, following the XDG base directory conventions.
#pragma once

#include <filesystem>

namespace corral::paths {

// $XDG_STATE_HOME/corral (default ~/.local/state/corral): claims and local sandboxes.
std::filesystem::path state_dir();
// $XDG_CACHE_HOME/corral (default ~/.cache/corral): what can be recomputed, e.g. plugin specs.
std::filesystem::path cache_dir();
// $XDG_CONFIG_HOME/corral (default ~/.config/corral): user config and registries.
std::filesystem::path config_dir();
// $CORRAL_ETC_DIR or /etc/corral: system-wide registries.
std::filesystem::path etc_dir();
// The folder of the running executable.
std::filesystem::path executable_dir();
// The registry shipped beside the binary: <prefix>/share/corral/providers.yaml.
std::filesystem::path shipped_registry();

}  // namespace corral::paths
