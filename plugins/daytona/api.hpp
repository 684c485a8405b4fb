// Authorized calls to Daytona (control plane and toolbox alike): the API key as
// Authorization: Bearer, the organization header when set, JSON in and out, and the
// SDK's bounded retries (sdk::http::send_retrying) for calls that are safe to repeat.
#pragma once

#include <functional>
#include <string>

#include "corral/sdk/http.hpp"
#include "settings.hpp"

namespace corral::daytona {

using Retry = sdk::http::Retry;

// Which time limit bounds a call: the create call's (--daytona-create-timeout) or every
// other call's (--daytona-request-timeout).
enum class Limit { create, request };

class Api {
 public:
  Api(sdk::http::Client& client, const Settings& settings) : client_(client), settings_(settings) {}

  // The headers every Daytona request carries (also the WebSocket upgrade's).
  std::vector<std::pair<std::string, std::string>> headers() const;

  // Sends `method url` with JSON `body` (may be empty), bounded by `limit`; a timeout's
  // hint names the setting to raise. `cancelled`, when set, aborts the call (only for
  // calls without side effects) and any wait between retries. Throws missing_api_key()
  // before sending anything when no key is set.
  sdk::http::Response send(const std::string& method, const std::string& url, const std::string& body,
                           const std::string& what, Limit limit, Retry retry,
                           const std::function<bool()>& cancelled = {});

  // Sends a prepared request (e.g. an upload) with the headers above, never retried.
  sdk::http::Response send(sdk::http::Request request);

  const Settings& settings() const { return settings_; }

 private:
  sdk::http::Client& client_;
  const Settings& settings_;
};

}  // namespace corral::daytona
