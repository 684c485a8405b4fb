// The plugin's entry point: the Docker Sandboxes provider behind corral's C ABI.
#include "provider.hpp"
#include "spec.hpp"

CORRAL_PLUGIN(corral::docker_sandbox::DockerSandboxProvider, "0.1.0", corral::docker_sandbox::kSpecJson)
