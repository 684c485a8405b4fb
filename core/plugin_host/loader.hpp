// Verifies and loads one provider plugin library. Each failure has a typed cause and
// one message naming the file, what was expected and what was found.
#pragma once

#include <boost/dll/shared_library.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corral/plugin_abi.h"
#include "corral/types.hpp"

namespace corral {

enum class LoadFailure {
  missing_file,
  untrusted_file,
  checksum_mismatch,
  not_a_library,
  missing_entry_point,
  load_failed,
  abi_mismatch,
  bad_descriptor,
  bad_spec,
  missing_primitive,
  crashed,  // the probe child died while loading it (a signal or an exit)
  hung,     // the probe child was still loading it at the deadline and was killed
  bad_registry,  // the registry file or its entry is malformed (unknown key, bad value)
  not_probed,    // not in the spec cache, and the registry was read without probing
};
std::string_view to_string(LoadFailure cause);
// The cause named `text` (as to_string writes it), or nullopt.
std::optional<LoadFailure> parse_load_failure(std::string_view text);

struct LoadError {
  LoadFailure cause;
  std::string message;
};

// A loaded plugin: its library stays mapped for as long as this object lives.
class Plugin {
 public:
  Plugin(boost::dll::shared_library library, const corral_plugin_v1& table, ProviderSpec spec,
         std::filesystem::path path);
  const ProviderSpec& spec() const { return spec_; }
  const std::filesystem::path& path() const { return path_; }
  std::string version() const { return table_.plugin_version ? table_.plugin_version : ""; }
  // The descriptor, zero-extended to this host's struct size.
  const corral_plugin_v1& table() const { return table_; }

 private:
  boost::dll::shared_library library_;
  corral_plugin_v1 table_;
  ProviderSpec spec_;
  std::filesystem::path path_;
};

struct LoadOptions {
  std::string expected_sha256;  // empty = not pinned
  bool check_permissions = true;
};

struct LoadResult {
  std::shared_ptr<const Plugin> plugin;
  std::optional<LoadError> error;
};

// Verifies `path` (exists, trusted along its whole path, pinned checksum, exports the
// entry point), then loads the file it resolves to with RTLD_NOW | RTLD_LOCAL and checks
// the ABI version, the spec and that every advertised feature has its primitives. This
// runs the plugin's code in this process: see plugin_probe.hpp for doing it at arm's
// length. Never throws.
LoadResult load_plugin(const std::filesystem::path& path, const LoadOptions& options);

}  // namespace corral
