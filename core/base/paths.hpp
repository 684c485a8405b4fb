// Where corral keeps and finds things, following the XDG base directory conventions.
#pragma once

#include <filesystem>
#include <string>

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

// Makes `dir` (and its missing parents) a folder only this user may enter (0700) and
// checks it is one: a link or a file planted in its place, or a folder of another user,
// is refused, never followed or changed. Throws Error naming `what` and the folder: config
// for what the user must put right (a link, permissions, a read-only disk), quota for a
// full disk.
void make_private_folder(const std::filesystem::path& dir, const std::string& what);

}  // namespace corral::paths
