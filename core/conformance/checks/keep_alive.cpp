// Checks of keep-alive: a kept sandbox's lifetime can be extended.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include "base/printable.hpp"

namespace corral::conformance {

namespace {

void extend(CheckContext& cx) {
  Sandbox s = cx.kit.with_lease(cx.kept_lease(), Lease::Access::exclusive, [](Lease& l) { return l.extend(600); });
  if (s.id != cx.kept_sandbox) fail(fmt::format("extend answered for sandbox {}, not {}", printable(s.id), cx.kept_sandbox));
}

}  // namespace

std::vector<CheckDef> keep_alive_checks() {
  using F = Feature;
  return {
      {"extend", "a kept sandbox's lifetime can be extended", {F::run_session, F::keep_alive}, {}, &extend},
  };
}

}  // namespace corral::conformance
