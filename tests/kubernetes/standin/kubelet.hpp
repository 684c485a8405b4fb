// The stand-in's scheduler and kubelet: they take each pod from Pending to Ready (or to
// where a fault keeps it), run its containers' commands, fail it past its
// activeDeadlineSeconds, evict it on request, and end it when it is deleted (SIGTERM, then
// SIGKILL after the grace period), updating its status and recording Events as they go.
// Every function here is called with the state's mutex held.
#pragma once

#include <string>

#include "state.hpp"

namespace corral::kubernetes::standin {

// Starts tracking a Pod just stored: its folder and its place in the start sequence.
void kubelet_adopt(State& state, const json::Value& pod);
// Stores a Pod a controller makes (defaults filled in, no further checks) and adopts it.
ObjectPtr create_pod(State& state, json::Document pod, const std::string& ns);
// Advances every pod whose next step is due; returns when done (called every few ms).
void kubelet_tick(State& state);

// A pod being deleted with `grace_seconds` (0: at once): stores the deletionTimestamp or
// removes it, and stops its processes.
void kubelet_delete(State& state, const std::string& ns, const std::string& name, long grace_seconds);

// How an eviction ends the exec streams into the pod.
enum class ExecEnding {
  killed,   // their commands are killed: each stream gets exit code 137 (as containerd reports it)
  dropped,  // the streams end with no status at all (the node went away)
};
// Evicts a running pod as the kubelet does under memory pressure: Failed, reason Evicted.
// False when there is no such pod.
bool kubelet_evict(State& state, const std::string& ns, const std::string& name, ExecEnding ending);

// The environment a command in the pod starts with (PATH, HOSTNAME, the service's
// address, the container's env).
std::vector<std::string> pod_environment(const State& state, const PodRuntime& rt, const ContainerRuntime& c);

// Kills every process of every pod (the stand-in is stopping).
void kubelet_kill_all(State& state);

// Whether any process of process group `pgid` is still alive (zombies aside).
bool group_alive(pid_t pgid);

}  // namespace corral::kubernetes::standin
