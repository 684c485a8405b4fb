// The conformance kit's checks, by the file that holds them (see checks.def).
#pragma once

#include <string>
#include <vector>

#include "conformance/kit.hpp"

namespace corral::conformance {

#define CORRAL_CHECKS(name) std::vector<CheckDef> name##_checks();
#include "conformance/checks/checks.def"
#undef CORRAL_CHECKS

// Every check, in the order they run.
const std::vector<CheckDef>& all_checks();

// Empty when a provider with `spec` takes check `def` (it advertises what `def` needs);
// else why the check is skipped.
std::string missing_features(const CheckDef& def, const ProviderSpec& spec);

}  // namespace corral::conformance
