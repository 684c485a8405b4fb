// Checks of network-policy and network-allowlist: a policy keeps the command from what an open network reaches.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include "base/printable.hpp"

namespace corral::conformance {

namespace {

// Addresses an allow list may name that reach nothing (TEST-NET-1, RFC 5737).
constexpr const char* kUnusedAddress = "192.0.2.1";
constexpr const char* kOtherUnusedAddress = "192.0.2.2";

void network_none(CheckContext& cx) {
  cx.expect_reachable_when_open();
  const Reach seen = cx.reach({.mode = NetworkPolicy::Mode::none});
  if (seen == Reach::reached)
    fail(fmt::format("with --network none the command still reached {}: the provider does not enforce the policy",
                     cx.target.text()));
}

void network_allowlist(CheckContext& cx) {
  cx.expect_reachable_when_open();
  const std::string other = cx.target.ip() == kUnusedAddress ? kOtherUnusedAddress : kUnusedAddress;
  if (cx.reach({.mode = NetworkPolicy::Mode::allow, .allow = {other}}) == Reach::reached)
    fail(fmt::format("with --network allow:{} the command still reached {}: the provider does not enforce its "
                     "allow list",
                     other, cx.target.text()));
  if (cx.reach({.mode = NetworkPolicy::Mode::allow, .allow = {cx.target.ip()}}) != Reach::reached)
    fail(fmt::format("with --network allow:{} the command could not reach {}, which the list names",
                     cx.target.ip(), cx.target.text()));
}

}  // namespace

std::vector<CheckDef> network_checks() {
  using F = Feature;
  return {
      {"network-none", "--network none keeps the command from reaching an address an open network reaches",
       {F::network_policy}, {}, &network_none},
      {"network-allowlist", "--network allow: lets the command reach the addresses listed and no other",
       {F::network_allowlist}, {}, &network_allowlist},
  };
}

}  // namespace corral::conformance
