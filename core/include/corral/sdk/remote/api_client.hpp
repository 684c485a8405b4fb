// The one way a remote provider calls its API. Every call goes to the client's base URL
// with the provider's credentials (its auth hook, which refuses before anything is sent
// when there are none), is bounded by a time limit whose message names the setting to
// raise, is sent again on a busy answer or a broken connection only when it is safe to
// repeat, and is ended by Ctrl-C only when it changes nothing.
//
// Threads: an ApiClient is used by one thread at a time, as the http::Client it sends
// through is; copies share that client.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "corral/sdk.hpp"
#include "corral/sdk/http.hpp"
#include "corral/sdk/remote/identity.hpp"
#include "corral/sdk/tls.hpp"

namespace corral::sdk::remote {

// A call's time limit and the setting that chose it ("--e2b-request-timeout or
// CORRAL_E2B_REQUEST_TIMEOUT"), which the message of a call that runs past it names.
struct Limit {
  std::int64_t seconds = 60;
  std::string setting;
};

// The limit of `seconds` that the provider's time-limit option `option` chose.
Limit limit_of(const Identity& identity, std::string_view option, std::int64_t seconds);

// One call of a provider's API.
struct Call {
  std::string method = "GET";
  std::string path;  // after the client's base URL: "/sandboxes/ID"
  std::string body;  // JSON; may be empty
  std::string what;  // the call in messages: "E2B get sandbox ID"
  Limit limit;
  // Whether it may be sent again after a busy answer (429, 502-504) or a broken
  // connection: never for a call whose repeat could make a second sandbox or run a
  // command twice.
  http::Retry retry = http::Retry::idempotent;
  // Set only for a call that changes nothing: Ctrl-C on this host then ends it, and any
  // wait between tries, with Error(cancelled). A call that makes or changes something runs
  // to its limit instead, so Ctrl-C never leaves a change made behind corral's back.
  const Host* cancellable = nullptr;
  std::string content_type;  // "" = application/json
};

// Adds a request's credentials to `headers` (and `tls`, for a client certificate); throws
// before anything is sent when there are none (missing_api_key). `cancelled` stops what it
// runs to get them (a credential plugin).
using Authorize = std::function<void(std::vector<std::pair<std::string, std::string>>& headers, TlsSettings& tls,
                                     const std::function<bool()>& cancelled)>;

// The Authorize of an API that takes key `key` in header `header` as `prefix` + key, with
// `extra` headers beside it; refuses with missing_api_key(identity) when `key` is "".
Authorize key_header(const Identity& identity, std::string key, std::string header, std::string prefix = {},
                     std::vector<std::pair<std::string, std::string>> extra = {});

// What sets one client apart from another beyond its URL and credentials.
struct ClientOptions {
  http::RetryLimits retries;           // how often, and how long between, a call is sent again
  std::size_t max_answer_bytes = 0;    // the most of an answer collected (0: no bound)
  // Asked once a call was refused (401): true when fresh credentials can be had (an exec
  // plugin's, fetched anew), and the call is then sent once more with them.
  std::function<bool()> renew_credentials;
};

class ApiClient {
 public:
  // Calls `base_url` + each call's path through `http`, which must outlive the client.
  ApiClient(http::Client& http, std::string base_url, Authorize authorize, ClientOptions options = {});

  // Sends `call` and returns the answer whatever its status (callers decide what fails).
  // Throws what the auth hook throws, and http::send_retrying's errors: a timeout naming
  // the call's setting, a connection that broke on every try, Ctrl-C.
  http::Response send(const Call& call);
  // Sends `request` once as it was prepared (a streamed upload or download, a whole log),
  // its `url` after the base URL, its credentials after its own headers.
  http::Response send_once(http::Request request);
  // Adds the credentials, as send does, to a request of another kind (a WebSocket upgrade).
  void authorize(std::vector<std::pair<std::string, std::string>>& headers, TlsSettings& tls,
                 const std::function<bool()>& cancelled) const;
  // `path` after the base URL.
  std::string url(const std::string& path) const { return base_url_ + path; }

 private:
  http::Client* http_;
  std::string base_url_;
  Authorize authorize_;
  ClientOptions options_;
};

}  // namespace corral::sdk::remote
