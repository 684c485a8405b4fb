// Daytona's API as the plugin calls it, control plane and toolbox alike, through the SDK's
// client (corral/sdk/remote/api_client.hpp): the API key as Authorization: Bearer, the
// organization header when set and the source header on every request, and the two time
// limits the settings choose.
#pragma once

#include <string>

#include "corral/sdk/http.hpp"
#include "corral/sdk/remote/api_client.hpp"
#include "settings.hpp"

namespace corral::daytona {

using Retry = sdk::http::Retry;

class Api {
 public:
  // Calls through `client`; both must outlive the Api and the clients it makes.
  Api(sdk::http::Client& client, const Settings& settings);

  // The client for calls under `base_url`: the control plane's or a sandbox's toolbox. A
  // call throws missing_api_key() before sending anything when no key is set.
  sdk::remote::ApiClient at(std::string base_url) const;
  // The same through `client` instead (another thread's), which must outlive what it makes.
  sdk::remote::ApiClient at(std::string base_url, sdk::http::Client& client) const;
  // The limit of a call that makes a sandbox (create, fork): --daytona-create-timeout.
  const sdk::remote::Limit& create_limit() const { return create_limit_; }
  // The limit of every other call: --daytona-request-timeout.
  const sdk::remote::Limit& request_limit() const { return request_limit_; }

  const Settings& settings() const { return settings_; }

 private:
  sdk::http::Client& client_;
  const Settings& settings_;
  const sdk::remote::Limit create_limit_;
  const sdk::remote::Limit request_limit_;
};

}  // namespace corral::daytona
