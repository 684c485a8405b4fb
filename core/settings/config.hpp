// Settings from files (user config, then the repository's corral.yaml) and the
// resolution of provider options: flag > environment > repository > user > default.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/environment.hpp"
#include "corral/types.hpp"

namespace corral {

// One YAML settings file.
struct ConfigFile {
  std::filesystem::path path;
  YAML::Node root;
};

// A secret your own config declares (`secrets: {NAME: {hosts, from, header, format}}`),
// used by `run --secret NAME`; a repository's config may declare none.
struct SecretDeclaration {
  std::vector<std::string> hosts;
  std::string from;                     // "env:VAR", "file:PATH" or "command:ARGV"; "" = env:NAME
  std::string header = "Authorization";  // what a provider's egress rule sets
  std::string format = "Bearer {}";      // with {} standing for the value
  std::filesystem::path file;            // the config file that declares it
};

// Limits on one provider's sandboxes across every corral process of this machine, from
// the user's config (`limits: {NAME|default: {sandboxes, creates-per-minute}}`); 0 = none.
struct ProviderLimits {
  int sandboxes = 0;                  // live at once: being made, running, kept, paused or pooled
  int creates_per_minute = 0;         // new sandboxes in any 60 s
  double sandbox_hours_per_day = 0;   // sandbox-time a UTC day, past which creates are refused
  bool any() const { return sandboxes > 0 || creates_per_minute > 0 || sandbox_hours_per_day > 0; }
};

class Config {
 public:
  // Reads $XDG_CONFIG_HOME/corral/config.yaml and <workspace_root>/corral.yaml (or
  // .corral.yaml). Repository config is untrusted: a 'plugins' or 'registry' key there is
  // an error, never a way to load code. Throws ConfigError (exit 78) "FILE: ..." for a
  // file that does not parse or has the wrong shape.
  static Config load(const std::filesystem::path& workspace_root);
  // Builds a config from already-parsed layers (for tests); repository may be empty.
  // Checks each layer's shape ('provider' a name, 'env' a list of names, provider
  // sections option: single value, no other key with a single value or a list); throws
  // ConfigError "FILE: 'KEY' must be ..." or "FILE: 'KEY' is no setting".
  static Config from(std::optional<ConfigFile> user, std::optional<ConfigFile> repository);

  // The provider named by the repository, else the user config; `from` gets the file.
  std::optional<std::string> provider(std::string* from = nullptr) const;
  // `<provider>.<option>` from the repository (unless `user_only`), else the user config.
  std::optional<std::string> option(const std::string& provider, const std::string& option,
                                    std::string* from = nullptr, bool user_only = false) const;
  // What a kept sandbox does once idle ('idle: pause|stop'), from the repository, else the
  // user config; `from` gets the file. Checked to be one of kIdleActions when loaded.
  std::optional<std::string> idle(std::string* from = nullptr) const;
  // The repository config file, when there is one.
  std::optional<std::filesystem::path> repository_path() const;
  // The provider names the files use, with the file: each section's (`local:`) and each
  // key of a `network:` mapping. Which providers exist is the registry's to say.
  std::vector<std::pair<std::string, std::string>> section_names() const;
  // Option names set under `<provider>:` in any layer, with the file (to reject typos).
  std::vector<std::pair<std::string, std::string>> option_keys(const std::string& provider) const;
  // The network policy the user config (or, with `repository`, the repository's) gives
  // provider `spec`: 'network: POLICY' for every provider, or 'network: {NAME: POLICY}'
  // by provider name or alias; `from` gets the file. Which layer wins is the caller's
  // rule (a repository may only tighten), so each is asked for separately.
  std::optional<NetworkPolicy> network(const ProviderSpec& spec, bool repository, std::string* from = nullptr) const;
  // The user config's 'env:' allow-list (variables forwarded to every run); a
  // repository's config may not name any.
  std::vector<std::string> env_names() const;
  // The file env_names() come from (the user config), for messages.
  std::string env_file() const;
  // The user config's limits for the provider `name` (or one of `aliases`), else its
  // `default:` entry, else none; checked when loaded. A repository's config may set none.
  ProviderLimits limits(const std::string& name, const std::vector<std::string>& aliases = {}) const;
  // The user config's price of a sandbox-hour at provider `name` (or an alias), for
  // `corral usage`'s estimate (`prices: {e2b: 0.083}`); nullopt when it names none.
  std::optional<double> price_per_hour(const std::string& name, const std::vector<std::string>& aliases = {}) const;
  // The user config's declaration of secret `name`, checked when loaded; nullopt when none.
  std::optional<SecretDeclaration> secret(const std::string& name) const;

 private:
  std::optional<ConfigFile> user_;
  std::optional<ConfigFile> repository_;
};

struct ResolvedOption {
  std::string value;
  std::string source;  // "flag --e2b-template", "env E2B_API_KEY", a file path, "default"
  std::string warning;  // why the repository's value was not used (it would loosen isolation)
};

// Resolves every option of `spec` that has a value; `flags` maps option name to the
// value given as --<provider>-<option>. Validates types and choices, and rejects
// unknown option keys in config files (config error). A repository's value of a
// tightest-first option that is looser than the user's (or the default) is replaced by
// it, saying so in `warning`. Throws invalid-argument naming the source.
std::map<std::string, ResolvedOption> resolve_options(const ProviderSpec& spec, const StringMap& flags,
                                                      const EnvLookup& env, const Config& config);

// Checks `value` against the option's type and choices; throws invalid-argument.
void validate_option(const OptionSpec& option, const std::string& value, const std::string& source);

}  // namespace corral
