#include "conformance/checks/checks.hpp"

namespace corral::conformance {

const std::vector<CheckDef>& all_checks() {
  static const std::vector<CheckDef> all = [] {
    std::vector<CheckDef> checks;
    for (std::vector<CheckDef> (*part)() : {
#define CORRAL_CHECKS(name) &name##_checks,
#include "conformance/checks/checks.def"
#undef CORRAL_CHECKS
         })
      for (CheckDef& def : part()) checks.push_back(std::move(def));
    return checks;
  }();
  return all;
}

}  // namespace corral::conformance
