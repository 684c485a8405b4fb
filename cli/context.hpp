// What every command may need, built once per invocation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "corral/types.hpp"
#include "lease/claims.hpp"
#include "lease/lease.hpp"
#include "plugin_host/providers.hpp"
#include "plugin_host/registry.hpp"
#include "settings/config.hpp"
#include "terminal.hpp"

namespace corral::cli {

// The settings, the lease store and the providers of this invocation. The registry is
// read on first use, so `version` and `--help` load no plugin.
struct Context {
  Context(bool verbose, const Config& cfg);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  const Registry& registry();
  // The provider `--provider` named (empty: the environment's, corral.yaml's or the
  // default) with the command line's --<provider>-<option> flags.
  ProviderChoice choice(const std::string& provider) const { return {provider, provider_flags}; }

  TerminalUi ui;
  Config config;
  ClaimStore claims;
  Providers providers;
  LeaseContext leases;
  StringMap provider_flags;  // --<provider>-<option> VALUE, keyed "<provider>.<option>"
  // The line's words after its first "--", untouched: the command to run, or the words
  // `__complete` completes (CommandLine::words_after_dashes).
  std::vector<std::string> words_after_dashes;

 private:
  std::optional<Registry> registry_;
};

}  // namespace corral::cli
