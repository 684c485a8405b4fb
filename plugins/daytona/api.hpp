// Authorized calls to Daytona (control plane and toolbox alike): the API key as
// Authorization: Bearer, the organization header when set, JSON in and out, and bounded
// retries of 429 answers for calls that are safe to repeat.
#pragma once

#include <functional>
#include <string>

#include "corral/sdk/http.hpp"
#include "settings.hpp"

namespace corral::daytona {

// Whether a call may be sent again after a 429: reads, deletes and setters are; creating
// a sandbox or starting a command never is.
enum class Retry { idempotent, never };

class Api {
 public:
  Api(sdk::http::Client& client, const Settings& settings) : client_(client), settings_(settings) {}

  // The headers every Daytona request carries (also the WebSocket upgrade's).
  std::vector<std::pair<std::string, std::string>> headers() const;

  // Sends `method url` with JSON `body` (may be empty). `cancelled`, when set, aborts the
  // call (only for calls without side effects) and any wait between retries. Throws
  // missing_api_key() before sending anything when no key is set.
  sdk::http::Response send(const std::string& method, const std::string& url, const std::string& body,
                           const std::string& what, long timeout_seconds, Retry retry,
                           const std::function<bool()>& cancelled = {});

  // Sends a prepared request (e.g. an upload) with the headers above, never retried.
  sdk::http::Response send(sdk::http::Request request);

 private:
  sdk::http::Client& client_;
  const Settings& settings_;
};

// Seconds to wait before retry `attempt` (0-based) of a 429: the Retry-After header when
// it is a small number of seconds, else 0.5, 1, 2, 4 s; at most 10 s.
double retry_delay_seconds(const sdk::http::Response& response, int attempt);

}  // namespace corral::daytona
