#include "context.hpp"

#include "base/environment.hpp"

namespace corral::cli {

Context::Context(bool verbose, const Config& cfg)
    : ui(verbose),
      config(cfg),
      claims(ClaimStore::standard()),
      providers([this]() -> const Registry& { return registry(); }, config, process_env),
      leases{claims, providers, ui} {}

const Registry& Context::registry() {
  if (!registry_) registry_.emplace(Registry::load(Registry::default_sources()));
  return *registry_;
}

}  // namespace corral::cli
