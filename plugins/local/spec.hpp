// The local provider's spec: its name, features, settings and capability-matrix entry.
#pragma once

namespace corral::local {

// The ProviderSpec JSON handed to core through the plugin descriptor.
extern const char* const kSpecJson;

}  // namespace corral::local
