// A Pod's status as the kubelet reports it, from where the stand-in's kubelet has it:
// phase, conditions (PodScheduled Unschedulable with the scheduler's reason, Ready ...),
// IPs, start time and per-container states (ContainerCreating, ErrImagePull,
// ImagePullBackOff, running, terminated, CrashLoopBackOff), with the fields the real
// one always writes.
#pragma once

#include "state.hpp"

namespace corral::kubernetes::standin {

// Replaces `pod`'s status (and sets spec.nodeName once scheduled) from `rt`.
void write_pod_status(json::Document& pod, const PodRuntime& rt);

// The phase `rt` puts its pod in: Pending, Running, Succeeded or Failed.
std::string pod_phase(const PodRuntime& rt);

}  // namespace corral::kubernetes::standin
