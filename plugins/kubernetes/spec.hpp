// The Kubernetes provider's spec (its options and features) and its identity in messages.
#pragma once

#include "corral/sdk/remote/identity.hpp"

namespace corral::kubernetes {

extern const char* const kSpecJson;

// "Kubernetes" and the setting names of the spec, for the remote kit's messages.
const sdk::remote::Identity& identity();

}  // namespace corral::kubernetes
