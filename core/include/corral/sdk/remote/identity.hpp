// Who a remote provider is to its users, as every message of the remote kit names it,
// and how it reads its control plane's failures. A remote provider is one whose
// sandboxes live behind a control plane that takes an API key (E2B, Daytona); the kit
// (corral/sdk/remote/*.hpp) does for it what all of them do alike.
#pragma once

#include <string>

#include "corral/sdk/http.hpp"
#include "corral/sdk/setting_names.hpp"

namespace corral::sdk::remote {

struct Identity {
  std::string title;      // "E2B", "Daytona": the provider as its own documents name it
  SettingNames settings;  // its options' flags and variables, from its spec
  std::string key_url;    // where a user makes an API key
  std::string gone_hint;  // why a sandbox of this provider goes: the hint when one is gone
  // The provider's Error for failed answer `response` to call `what`: its hints name its
  // own settings, limits and status page. Unset: the SDK's http::status_error.
  Error (*api_error)(const http::Response& response, const std::string& what) = nullptr;
  std::string key_option = "api-key";  // the secret option that holds the key

  // The variable that holds the API key ("E2B_API_KEY").
  std::string key_env() const { return settings.env(key_option); }
};

}  // namespace corral::sdk::remote
