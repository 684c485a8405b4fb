// Checks of the end of the kit's run: the shared kept lease stopped, and nothing the kit made left behind.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include "base/printable.hpp"

namespace corral::conformance {

namespace {

void stop(CheckContext& cx) {
  const std::string lease = cx.kept_lease();
  const std::string sandbox = cx.kept_sandbox;
  cx.kept.clear();
  cx.kit.stop(lease);
  if (cx.kit.claims().inspect(lease)) fail("the lease is still claimed after stop");
  if (std::string left = cx.kit.still_there(sandbox); !left.empty()) fail(left + " after stop");
}

void nothing_left(CheckContext& cx) {
  std::vector<std::string> left;
  for (const Kit::Made& m : cx.kit.made()) {
    if (m.lease_id == cx.kept) continue;  // a session check failed before stop; cleaned below
    if (cx.kit.claims().inspect(m.lease_id)) left.push_back("lease " + m.lease_id + " is still claimed");
    if (std::string there = cx.kit.still_there(m.sandbox_id); !there.empty()) left.push_back(there);
  }
  if (!left.empty()) fail(fmt::format("{} left behind: {}", left.size(), left.front()));
}

}  // namespace

std::vector<CheckDef> closing_checks() {
  using F = Feature;
  return {
      {"stop", "corral stop removes a kept sandbox and forgets its lease", {F::run_session}, {}, &stop},
      {"nothing-left", "nothing the kit made is left: no claim, no sandbox", {}, {}, &nothing_left},
  };
}

}  // namespace corral::conformance
