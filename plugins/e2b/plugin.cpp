// The plugin's entry point: the E2B provider behind corral's C ABI.
#include "provider.hpp"
#include "spec.hpp"

CORRAL_PLUGIN(corral::e2b::E2bProvider, "0.1.0", corral::e2b::kSpecJson)
