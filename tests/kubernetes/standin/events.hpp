// core/v1 Events about pods, as the scheduler (through events.k8s.io) and the kubelet
// record them: what `kubectl describe` and a client explaining a stuck pod read.
#pragma once

#include <string>

#include "state.hpp"

namespace corral::kubernetes::standin {

struct EventSource {
  std::string component;  // "kubelet", "default-scheduler", "sandbox-controller"
  std::string host;       // the node, for the kubelet
  bool new_api = false;   // recorded through events.k8s.io/v1 (eventTime, action), as the scheduler does
  std::string action;     // for new_api: "Scheduling", ...
};

EventSource kubelet_source(const std::string& node);
EventSource scheduler_source();

// Stores an Event about `object`; `field_path` names a container ("spec.containers{main}").
// Caller holds the mutex.
void record_event(State& state, const json::Value& object, const EventSource& source, const std::string& type,
                  const std::string& reason, const std::string& message, const std::string& field_path = {});

}  // namespace corral::kubernetes::standin
