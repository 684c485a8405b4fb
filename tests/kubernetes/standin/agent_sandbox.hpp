// The agent-sandbox controllers (kubernetes-sigs/agent-sandbox, v1beta1) as far as a
// client sees them: a SandboxWarmPool keeps `replicas` ready Pods made from its
// SandboxTemplate; a SandboxClaim on the pool gets a Sandbox of its name, which adopts a
// ready warm Pod (its annotation agents.x-k8s.io/pod-name names it) or, with none ready,
// makes a Pod of its own; the claim's status names the Sandbox and forwards its Ready
// condition. Deleting an owner deletes what it owns (the garbage collector's cascade).
// Called with the state's mutex held, from the kubelet's tick.
#pragma once

#include "state.hpp"

namespace corral::kubernetes::standin {

inline constexpr const char* kPodNameAnnotation = "agents.x-k8s.io/pod-name";
inline constexpr const char* kWarmPoolLabel = "agents.x-k8s.io/warm-pool-sandbox";
inline constexpr const char* kClaimUidLabel = "agents.x-k8s.io/claim-uid";

void agent_sandbox_tick(State& state);

}  // namespace corral::kubernetes::standin
