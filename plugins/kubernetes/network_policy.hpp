// --network none and allow:CIDR,... as a NetworkPolicy per sandbox: every egress of the
// Pod denied but for the listed address blocks. Kubernetes policies name addresses, not
// domains, so a domain is refused; and only a network plugin that enforces policies
// (Calico, Cilium, ...) makes them hold, which `doctor` says.
#pragma once

#include <string>

#include "corral/types.hpp"

namespace corral::kubernetes {

// The pod label a sandbox's policy selects it by.
inline constexpr const char* kSandboxLabel = "corral.dev/sandbox";

// The NetworkPolicy for `pod` in `ns` enforcing `policy` (none or allow), owned by the Pod
// (uid `pod_uid`) so that it goes with it. Throws invalid-argument for a domain in an allow list.
std::string network_policy_manifest(const NetworkPolicy& policy, const std::string& ns, const std::string& pod,
                                    const std::string& pod_uid);

// /apis/networking.k8s.io/v1/namespaces/NS/networkpolicies[/NAME]
std::string network_policies_path(const std::string& ns, const std::string& name = {});

}  // namespace corral::kubernetes
