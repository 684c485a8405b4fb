// Which network policy a new sandbox gets, and whether its provider can enforce it. The
// policy is fixed when the sandbox is created; a provider that cannot enforce the asked
// policy is refused before anything is created, never silently given a looser one.
//
// Threads: functions of their arguments; safe from any thread as long as `ui` is.
#pragma once

#include <optional>
#include <string>

#include "settings/config.hpp"
#include "plugin_host/registry.hpp"
#include "base/ui.hpp"

namespace corral {

// True when `inner` lets the sandbox reach nothing that `outer` does not: none is within
// everything, everything is within open, and an allow list is within another when each
// of its entries is one of the other's, a subdomain of its "*.domain", or inside its CIDR.
bool network_within(const NetworkPolicy& inner, const NetworkPolicy& outer);

// The policy for a new sandbox of `spec`: `flag` when given, else the user config's,
// else the repository's, else open. A repository's corral.yaml is untrusted: it may
// tighten the user's policy but never loosen it; a looser one is ignored with a warning.
NetworkPolicy choose_network_policy(const std::optional<NetworkPolicy>& flag, const ProviderSpec& spec,
                                    const Config& config, Ui& ui);

// Refuses (unsupported, before anything is created) a policy `spec`'s provider cannot
// enforce: none needs network-policy, allow: needs network-allowlist, and an allow list
// with a domain (or *.domain) needs network-allowlist-domains too. The message names the
// provider, the feature (and the domains) and the installed providers that have all it takes.
void require_network_policy(const ProviderSpec& spec, const NetworkPolicy& policy, const Registry& registry);

}  // namespace corral
