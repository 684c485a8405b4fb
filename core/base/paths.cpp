#include "base/paths.hpp"

#include <unistd.h>

#include <cstdlib>

#include "base/environment.hpp"
#include "corral/option_default.hpp"

namespace fs = std::filesystem;

namespace corral::paths {

fs::path state_dir() { return xdg_folder("XDG_STATE_HOME", process_env) / "corral"; }
fs::path cache_dir() { return xdg_folder("XDG_CACHE_HOME", process_env) / "corral"; }
fs::path config_dir() { return xdg_folder("XDG_CONFIG_HOME", process_env) / "corral"; }

fs::path etc_dir() {
  const char* v = std::getenv("CORRAL_ETC_DIR");
  return v && *v ? fs::path(v) : fs::path("/etc/corral");
}

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

fs::path shipped_registry() {
  return (executable_dir() / CORRAL_REGISTRY_RELPATH).lexically_normal();
}

}  // namespace corral::paths
