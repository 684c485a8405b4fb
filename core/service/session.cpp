#include "service/session.hpp"

#include "base/environment.hpp"
#include "lease/pool_claims.hpp"
#include "service/refill.hpp"

namespace corral::service {

Session::Session(Config config, std::filesystem::path self)
    : config_(std::move(config)),
      claims_(ClaimStore::standard()),
      fleet_(FleetGate::standard_dir(claims_), claims_,
             [this](const std::string& provider) { return config_.limits(provider, aliases(provider)); }),
      providers_([this]() -> const Registry& { return registry(); }, config_, process_env),
      self_(std::move(self)) {}

const Registry& Session::registry() {
  std::lock_guard lock(registry_mutex_);
  if (!registry_) registry_.emplace(Registry::load(Registry::default_sources()));
  return *registry_;
}

std::vector<std::string> Session::aliases(const std::string& name) {
  try {
    return providers_.spec(name).aliases;
  } catch (const Error&) {
    return {};
  }
}

RefillFn Session::refill(Ui& ui) const {
  if (self_.empty()) return {};
  return [this, &ui](const PoolRefill& r) { start_refill(self_, ensure_pools_dir(claims_) / "refill.log", r, ui); };
}

}  // namespace corral::service
