// What the API server does with a Pod it is asked to store: the defaults and admission
// plug-ins fill in (service account, tolerations, pull policy, QoS class, ...), the
// validation of a new Pod, and the narrow set of changes it allows to an existing one
// (images, a lower activeDeadlineSeconds, labels and annotations; nothing else).
#pragma once

#include <string>
#include <vector>

#include "object.hpp"
#include "status.hpp"

namespace corral::kubernetes::standin {

// Fills in a new Pod's spec defaults and its initial status (Pending, its QoS class).
void default_pod(json::Document& pod);
std::vector<FieldError> validate_pod(const json::Value& pod);
std::vector<FieldError> validate_pod_update(const json::Value& old_pod, const json::Value& new_pod);

// Guaranteed, Burstable or BestEffort, from the containers' requests and limits.
std::string qos_class(const json::Value& pod);

// What the scheduler fits: the sum of the containers' requests (cores, bytes).
struct Requests {
  double cpu = 0;
  double memory = 0;
};
Requests requests_of(const json::Value& pod);

// The image as the runtime reports it: "busybox" is "docker.io/library/busybox:latest".
std::string normalized_image(const std::string& image);

}  // namespace corral::kubernetes::standin
