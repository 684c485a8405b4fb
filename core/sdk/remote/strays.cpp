#include "corral/sdk/remote/strays.hpp"

#include "corral/wire.hpp"

namespace corral::sdk::remote {

void remove_strays(const Identity& identity, Provider& provider, const std::string& lease_id, const Host& host) {
  try {
    for (const Sandbox& stray : provider.list({{wire::kLeaseLabel, lease_id}}, host)) provider.destroy(stray, host);
  } catch (const Error& e) {
    const std::string name = identity.settings.provider();
    host.warn(identity.title + " may have created a sandbox for lease " + lease_id + " that corral could not remove (" +
              e.what() + "); check with `corral list --remote --provider " + name +
              "` and remove it with `corral stop --orphans --provider " + name + "`");
  }
}

}  // namespace corral::sdk::remote
