// Checks of cleanup: the provider lists corral's sandboxes with their lease and host labels.
#include "conformance/checks/checks.hpp"

#include <fmt/format.h>

#include "base/printable.hpp"
#include "lease/fleet.hpp"
#include "corral/wire.hpp"

namespace corral::conformance {

namespace {

void listing(CheckContext& cx) {
  const std::string lease = cx.kept_lease();
  const std::string host = cx.kit.claims().host_id();
  auto [all, by_lease] = cx.kit.with_session([&](ProviderSession& session) {
    return std::pair(session.list({{wire::kOwnerLabel, wire::kOwnerValue}}),
                     session.list({{wire::kOwnerLabel, wire::kOwnerValue}, {wire::kLeaseLabel, lease}}));
  });
  const Sandbox* found = nullptr;
  for (const Sandbox& s : all)
    if (s.id == cx.kept_sandbox) found = &s;
  if (!found) fail(fmt::format("list did not return the kept sandbox {} ({} listed)", cx.kept_sandbox, all.size()));
  if (by_lease.size() != 1 || by_lease.front().id != cx.kept_sandbox)
    fail(fmt::format("list filtered by {}={} returned {} sandboxes, expected only {}", wire::kLeaseLabel, lease,
                     by_lease.size(), cx.kept_sandbox));
  auto label = [&](const char* key) -> std::optional<std::string> {
    auto it = found->labels.find(key);
    return it == found->labels.end() ? std::nullopt : std::optional(it->second);
  };
  // Without it, `stop --orphans` cannot see that a running corral is still creating the sandbox.
  if (label(wire::kLeaseLabel) != lease)
    fail(fmt::format("the listed sandbox's {} label is {}, expected {}", wire::kLeaseLabel,
                     label(wire::kLeaseLabel).value_or("missing"), lease));
  // Without it, another machine's `stop --orphans` on the same account would take it
  // for its own; only a provider whose sandboxes are all this machine's may do without.
  std::optional<std::string> host_label = label(wire::kHostLabel);
  if (host_label ? *host_label != host : !lists_only_this_host(cx.spec))
    fail(fmt::format("the listed sandbox's {} label is {}, expected this machine's {}", wire::kHostLabel,
                     host_label.value_or("missing"), host));
}

}  // namespace

std::vector<CheckDef> cleanup_checks() {
  using F = Feature;
  return {
      {"listing", "the provider lists corral's sandboxes with their lease and host labels",
       {F::run_session, F::cleanup}, {}, &listing},
  };
}

}  // namespace corral::conformance
