// The host as every front end drives it (the CLI, an MCP server): the user's settings,
// the lease claims, the providers (the registry read on first use) and how a run refills
// the warm pool it took a sandbox from. The composition root, without a terminal: each
// operation (run_spec.hpp, leases.hpp, pools.hpp) reports to the Ui its caller gives.
//
// Threads: one Session may serve operations on several threads at once (an MCP server's
// concurrent tool calls), each with a Ui of its own; the registry is read once, under a
// lock, by whichever thread needs it first.
#pragma once

#include <filesystem>
#include <mutex>
#include <optional>

#include "lease/lease.hpp"
#include "lease/pool.hpp"
#include "plugin_host/providers.hpp"
#include "plugin_host/registry.hpp"
#include "settings/config.hpp"

namespace corral::service {

class Session {
 public:
  // `config` as read for the working tree; `self` is corral's own executable, which a run
  // that takes a pooled sandbox starts again (detached) to refill the pool; "" = none.
  explicit Session(Config config, std::filesystem::path self = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Config& config() const { return config_; }
  const ClaimStore& claims() const { return claims_; }
  Providers& providers() { return providers_; }
  // The registries, read on first use.
  const Registry& registry();
  // What one operation reporting to `ui` works with.
  LeaseContext context(Ui& ui) { return {claims_, providers_, ui, &fleet_}; }
  // The machine's fleet gate, under this config's limits.
  const FleetGate& fleet() const { return fleet_; }
  // The aliases of installed provider `name` (settings may name it by one); none when
  // it is not installed or does not load.
  std::vector<std::string> aliases(const std::string& name);
  // How a run that reports to `ui` refills a pool it took from; unset without `self`.
  RefillFn refill(Ui& ui) const;

 private:
  Config config_;
  ClaimStore claims_;
  FleetGate fleet_;
  std::mutex registry_mutex_;
  std::optional<Registry> registry_;
  Providers providers_;
  std::filesystem::path self_;
};

}  // namespace corral::service
