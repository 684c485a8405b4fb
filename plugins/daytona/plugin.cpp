// The plugin's entry point: the Daytona provider behind corral's C ABI.
#include "provider.hpp"
#include "spec.hpp"

CORRAL_PLUGIN(corral::daytona::DaytonaProvider, "0.1.0", corral::daytona::kSpecJson)
