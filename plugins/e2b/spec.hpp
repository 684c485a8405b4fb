// The E2B provider's spec: its name, features, settings and capability-matrix entry.
#pragma once

#include "corral/sdk/remote/identity.hpp"

namespace corral::e2b {

// The ProviderSpec JSON handed to core through the plugin descriptor.
extern const char* const kSpecJson;

// Who this provider is to the SDK's remote kit: its title, its settings (read from
// kSpecJson), where its API keys are made, why a sandbox goes, and its api_error.
const sdk::remote::Identity& identity();

}  // namespace corral::e2b
