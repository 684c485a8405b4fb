#include "paths.hpp"

#include <unistd.h>

#include <cstdlib>

namespace fs = std::filesystem;

namespace corral::paths {
namespace {

fs::path home() {
  const char* h = std::getenv("HOME");
  return h && *h ? fs::path(h) : fs::path("/");
}

// The XDG variable's value when it is an absolute path (the spec says to ignore
// relative ones), else $HOME/<fallback>.
fs::path xdg(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  if (v && *v == '/') return fs::path(v);
  return home() / fallback;
}

}  // namespace

fs::path state_dir() { return xdg("XDG_STATE_HOME", ".local/state") / "corral"; }
fs::path cache_dir() { return xdg("XDG_CACHE_HOME", ".cache") / "corral"; }
fs::path config_dir() { return xdg("XDG_CONFIG_HOME", ".config") / "corral"; }

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
  return (executable_dir() / ".." / "share" / "corral" / "providers.yaml").lexically_normal();
}

}  // namespace corral::paths
