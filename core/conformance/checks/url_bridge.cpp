// Checks of url-bridge: a kept sandbox's port has an http(s) URL.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include "base/printable.hpp"

namespace corral::conformance {

namespace {

void url(CheckContext& cx) {
  std::string got = cx.kit.with_lease(cx.kept_lease(), Lease::Access::observe, [](Lease& l) { return l.url(8080); });
  bool scheme = got.rfind("http://", 0) == 0 || got.rfind("https://", 0) == 0;
  std::size_t host = got.find("://") + 3;
  if (!scheme || got.size() <= host || got.find_first_of(" \t\r\n") != std::string::npos)
    fail(fmt::format("the URL of port 8080 is {}, not an http(s) URL", literal(got)));
}

}  // namespace

std::vector<CheckDef> url_bridge_checks() {
  using F = Feature;
  return {
      {"url", "a kept sandbox's port has an http(s) URL", {F::run_session, F::url_bridge}, {}, &url},
  };
}

}  // namespace corral::conformance
