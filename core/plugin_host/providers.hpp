// Choosing and opening a provider: which one a command uses (flag, environment, config,
// default), its options resolved and checked against its spec, the features a request
// needs, and the environment a command may receive.
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
  // `registry` is called on first use, so commands that open no provider load none.
  Providers(std::function<const Registry&()> registry, const Config& config, Ui& ui, EnvLookup env);

  // The provider to use: flag, CORRAL_PROVIDER, config, else "local"; `from` says which.
  std::string resolve(const ProviderChoice& choice, std::string* from = nullptr) const;
  // Loads and opens provider `name` with its options resolved. Throws a precise error
  // for an unknown or broken provider or a bad option.
  std::unique_ptr<ProviderSession> open(const std::string& name, const ProviderChoice& choice);
  // The spec of the provider called `name` (or an alias), without loading its code.
  const ProviderSpec& spec(const std::string& name) const;
  // The variables named by the user config's env list and `names`, with their values.
  // Refuses unset names and any installed provider's secret.
  StringMap forwarded_env(const std::vector<std::string>& names) const;
  // Refuses, before anything is created, a request that needs a feature `spec` lacks.
  static void require(const ProviderSpec& spec, Feature feature, std::string_view what);

  const Registry& registry() const { return registry_(); }
  const Config& config() const { return config_; }
  Ui& ui() const { return ui_; }
  // The same providers and settings, reporting to `ui` instead (a fan-out's shard).
  Providers with_ui(Ui& ui) const {
    Providers same(registry_, config_, ui, env_);
    same.isolated_grace_ = isolated_grace_;
    return same;
  }
  // From now on every plugin opened runs in its helper process (isolation: process),
  // whatever its registry entry says, with at most `cancel_grace` after a stop: so a
  // plugin that crashes, hangs or ignores cancellation costs a helper (conformance).
  void isolate(std::chrono::milliseconds cancel_grace) { isolated_grace_ = cancel_grace; }

 private:
  const ProviderEntry& entry(const std::string& name) const;

  std::function<const Registry&()> registry_;
  const Config& config_;
  Ui& ui_;
  EnvLookup env_;
  std::optional<std::chrono::milliseconds> isolated_grace_;
};

}  // namespace corral
