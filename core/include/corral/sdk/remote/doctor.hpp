// What `corral doctor` checks of a remote provider: that its API key is set, then that
// its control plane accepts the key. The second is a real call (the provider's own list
// of corral's sandboxes), so a wrong URL, a revoked key or an outage each show with the
// provider's own error and hint.
#pragma once

#include <string>
#include <vector>

#include "corral/sdk.hpp"
#include "corral/sdk/remote/identity.hpp"
#include "corral/types.hpp"

namespace corral::sdk::remote {

// The control plane a doctor asks.
struct ControlPlane {
  std::string name;  // the check's name: "E2B control plane"
  std::string url;   // where it is, for the check's detail
};

// The check that `key` is set and, if it is, whether `provider`'s list of corral's sandboxes at `control_plane` works.
std::vector<DoctorCheck> doctor_checks(const Identity& identity, const std::string& key,
                                       const ControlPlane& control_plane, Provider& provider, const Host& host);

}  // namespace corral::sdk::remote
