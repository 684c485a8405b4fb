// A sandbox from an agent-sandbox warm pool (kubernetes-sigs/agent-sandbox, API group
// extensions.agents.x-k8s.io/v1beta1): a SandboxClaim against the SandboxWarmPool, bound
// to a Sandbox that adopts one of the pool's ready Pods (annotation
// agents.x-k8s.io/pod-name) or makes its own. Deleting the claim deletes the rest.
#pragma once

#include <cstdint>
#include <string>

#include "api.hpp"
#include "corral/types.hpp"

namespace corral::kubernetes {

// /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/NS/sandboxclaims[/NAME]
std::string claims_path(const std::string& ns, const std::string& name = {});

// The SandboxClaim `name` against warm pool `pool`, carrying `labels`.
std::string claim_manifest(const std::string& name, const std::string& ns, const std::string& pool,
                           const StringMap& labels);

// Creates claim `name` and waits (within `timeout_seconds`) until it is bound and Ready;
// returns the name of its Pod. Throws not_found when the pool does not exist, unavailable
// when the claim is not Ready in time (naming its condition), cancelled on Ctrl-C.
std::string claim_pod(Api& api, const std::string& ns, const std::string& name, const std::string& pool,
                      const StringMap& labels, std::int64_t timeout_seconds, const sdk::Host& host);

}  // namespace corral::kubernetes
