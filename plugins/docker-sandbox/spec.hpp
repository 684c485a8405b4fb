// The docker-sandbox provider's spec: the single source for `providers describe`, the
// settings core resolves and the capability matrix.
#pragma once

namespace corral::docker_sandbox {

// The ProviderSpec JSON handed to core through the plugin descriptor.
extern const char* const kSpecJson;

}  // namespace corral::docker_sandbox
