#include "corral/sdk/remote/doctor.hpp"

#include "corral/sdk/remote/errors.hpp"

namespace corral::sdk::remote {

std::vector<DoctorCheck> doctor_checks(const Identity& identity, const std::string& key,
                                       const ControlPlane& control_plane, Provider& provider, const Host& host) {
  std::vector<DoctorCheck> checks;
  DoctorCheck key_check{identity.title + " API key", !key.empty(), identity.key_env() + " is set", ""};
  if (!key_check.ok) {
    const Error missing = missing_api_key(identity);
    key_check.detail = missing.what();
    key_check.hint = missing.hint();
  }
  checks.push_back(key_check);
  if (!key_check.ok) return checks;  // the control plane could only say the same, less clearly
  DoctorCheck api{control_plane.name, false, "", ""};
  try {
    const std::size_t owned = provider.list({}, host).size();
    api.ok = true;
    api.detail = control_plane.url + " accepts the key; " + std::to_string(owned) + " corral sandbox(es)";
  } catch (const Error& e) {
    api.detail = e.what();
    api.hint = e.hint();
  }
  checks.push_back(api);
  return checks;
}

}  // namespace corral::sdk::remote
