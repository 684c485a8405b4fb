// networking.k8s.io/v1 NetworkPolicy: the API server's defaults and validation, and the
// stand-in's enforcement of egress for a pod's commands. A pod that some policy isolates
// for egress reaches only what the policies' egress rules allow; the stand-in's pods live
// on this machine, so it enforces that as it can: with this machine's network when a rule
// allows 127.0.0.1 (the one address tests can listen on) or allows everything, and with
// no network at all otherwise (ports and pod or namespace peers are not told apart).
#pragma once

#include <string>
#include <vector>

#include "object.hpp"
#include "selectors.hpp"
#include "status.hpp"

namespace corral::kubernetes::standin {

class Store;

void default_network_policy(json::Document& policy);
std::vector<FieldError> validate_network_policy(const json::Value& policy);

// A metav1.LabelSelector ({matchLabels, matchExpressions}) as a selector.
LabelSelector label_selector_from(const json::Value& selector);

// Whether the pod's commands must run without a network under the namespace's policies.
bool egress_denied(const Store& store, const json::Value& pod);

}  // namespace corral::kubernetes::standin
