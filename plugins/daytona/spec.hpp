// The Daytona provider's spec: its name, features, settings and capability-matrix entry.
#pragma once

namespace corral::daytona {

// The ProviderSpec JSON handed to core through the plugin descriptor.
extern const char* const kSpecJson;

}  // namespace corral::daytona
