// Choosing and opening a provider: which one a command uses (flag, environment, config,
// default), its options resolved and checked against its spec, the features a request
// needs, and the environment a command may receive.
//
// Threads: after construction (and isolate(), if at all) a Providers is only read, so its
// methods may be called from several threads at once (a fan-out's shards open sessions
// through one), provided the registry was loaded before: the `registry` function is
// called on first use and need not be safe to call from two threads at once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settings/config.hpp"
#include "plugin_host/provider_session.hpp"
#include "plugin_host/registry.hpp"
#include "base/ui.hpp"

namespace corral {

// Selections that apply to every command that talks to a provider.
struct ProviderChoice {
  std::string provider;    // --provider; empty = env, config or the default
  StringMap option_flags;  // --<provider>-<option> values, keyed "<provider>.<option>"
};

class Providers {
 public:
  // Makes the plugin instance of a registry entry. The default asks the registry (the
  // plugin loaded here, or in its helper process); a test can give a fake plugin.
  using MakeInstance = std::function<std::unique_ptr<PluginInstance>(const ProviderEntry& entry)>;

  // `registry` is called on first use, so commands that open no provider load none.
  // `config` is borrowed and must outlive this object.
  Providers(std::function<const Registry&()> registry, const Config& config, EnvLookup env,
            MakeInstance make_instance = {});

  // The provider to use: flag, CORRAL_PROVIDER, config, else "local"; `from` says which.
  std::string resolve(const ProviderChoice& choice, std::string* from = nullptr) const;
  // Loads and opens provider `name` with its options resolved; the session reports its
  // output, messages and progress to `ui` and stops when `ui` says so. `ui` is borrowed
  // and must outlive the session. Throws a precise error for an unknown or broken
  // provider or a bad option (warnings about options go to `ui`).
  std::unique_ptr<ProviderSession> open(const std::string& name, const ProviderChoice& choice, Ui& ui);
  // Throws ConfigError (78) with a did-you-mean when a config file names a provider (a
  // section, a `network:` key) that no registry lists: its settings would apply to nothing.
  void check_section_names() const;
  // The option values open() gives provider `name` for `choice`: flags over the
  // environment over the config over the spec's defaults. Throws for a flag of another
  // provider; warnings about the values go to `warn` when given.
  StringMap option_values(const std::string& name, const ProviderChoice& choice,
                          const std::function<void(const std::string&)>& warn = {}) const;
  // The spec of the provider called `name` (or an alias), without loading its code.
  const ProviderSpec& spec(const std::string& name) const;
  // The variables the user config's env list and `requested` name, with their values; an
  // item NAME=VALUE of `requested` sets NAME to VALUE. Refuses forwarding any installed
  // provider's secret, and a requested name that is not set; the config's names that are
  // not set are left out, and listed to `warn` when given.
  StringMap forwarded_env(const std::vector<std::string>& requested,
                          const std::function<void(const std::string&)>& warn = {}) const;
  // Refuses, before anything is created, a request that needs a feature `spec` lacks;
  // the hint names `having` (the providers that have it, see having()) when given.
  static void require(const ProviderSpec& spec, Feature feature, std::string_view what,
                      const std::vector<std::string>& having = {});
  // The installed providers whose spec has `feature`, by name.
  std::vector<std::string> having(Feature feature) const;

  const Registry& registry() const { return registry_(); }
  // The environment options, forwarded variables and secrets are read from.
  const EnvLookup& env() const { return env_; }
  const Config& config() const { return config_; }
  // From now on every plugin opened runs in its helper process (isolation: process),
  // whatever its registry entry says, with at most `cancel_grace` after a stop: so a
  // plugin that crashes, hangs or ignores cancellation costs a helper (conformance).
  // Call it before sharing this object between threads.
  void isolate(std::chrono::milliseconds cancel_grace) { isolated_grace_ = cancel_grace; }

 private:
  // Throws invalid-argument when `name` is the variable of an installed provider's secret.
  void refuse_secret(const std::string& name) const;
  const ProviderEntry& entry(const std::string& name) const;

  std::function<const Registry&()> registry_;
  const Config& config_;
  EnvLookup env_;
  MakeInstance make_instance_;
  std::optional<std::chrono::milliseconds> isolated_grace_;
};

}  // namespace corral
