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

// The allow-list entry naming `ip` and, where the provider's entries carry ports (an
// entry without one then means 80 and 443), the target's port.
std::string entry_for(const CheckContext& cx, const std::string& ip, int port) {
  return cx.spec.features.has(Feature::network_allowlist_ports) ? fmt::format("{}:{}", ip, port) : ip;
}

void network_allowlist(CheckContext& cx) {
  cx.expect_reachable_when_open();
  const std::string other =
      entry_for(cx, cx.target.ip() == kUnusedAddress ? kOtherUnusedAddress : kUnusedAddress, cx.target.port());
  if (cx.reach({.mode = NetworkPolicy::Mode::allow, .allow = {other}}) == Reach::reached)
    fail(fmt::format("with --network allow:{} the command still reached {}: the provider does not enforce its "
                     "allow list",
                     other, cx.target.text()));
  const std::string named = entry_for(cx, cx.target.ip(), cx.target.port());
  if (cx.reach({.mode = NetworkPolicy::Mode::allow, .allow = {named}}) != Reach::reached)
    fail(fmt::format("with --network allow:{} the command could not reach {}, which the list names", named,
                     cx.target.text()));
}

void network_allowlist_ports(CheckContext& cx) {
  cx.expect_reachable_when_open();
  const int other_port = cx.target.port() == 65535 ? 1 : cx.target.port() + 1;
  const std::string other = fmt::format("{}:{}", cx.target.ip(), other_port);
  if (cx.reach({.mode = NetworkPolicy::Mode::allow, .allow = {other}}) == Reach::reached)
    fail(fmt::format("with --network allow:{} the command still reached {}: the provider does not hold an entry to "
                     "its port",
                     other, cx.target.text()));
  if (cx.reach({.mode = NetworkPolicy::Mode::allow, .allow = {cx.target.text()}}) != Reach::reached)
    fail(fmt::format("with --network allow:{0} the command could not reach {0}, which the list names",
                     cx.target.text()));
}

}  // namespace

std::vector<CheckDef> network_checks() {
  using F = Feature;
  return {
      {"network-none", "--network none keeps the command from reaching an address an open network reaches",
       {F::network_policy}, {}, &network_none},
      {"network-allowlist", "--network allow: lets the command reach the addresses listed and no other",
       {F::network_allowlist}, {}, &network_allowlist},
      {"network-allowlist-ports", "an allow-list entry's port lets the command reach that port of the host and no other",
       {F::network_allowlist, F::network_allowlist_ports}, {}, &network_allowlist_ports},
  };
}

}  // namespace corral::conformance
