// The plugin's entry point: the Kubernetes provider behind corral's C ABI.
#include "provider.hpp"
#include "spec.hpp"

CORRAL_PLUGIN(corral::kubernetes::KubernetesProvider, "0.1.0", corral::kubernetes::kSpecJson)
