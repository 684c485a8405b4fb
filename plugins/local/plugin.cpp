// The plugin's entry point: the local provider behind corral's C ABI.
#include "provider.hpp"
#include "spec.hpp"

CORRAL_PLUGIN(corral::local::LocalProvider, "0.1.0", corral::local::kSpecJson)
