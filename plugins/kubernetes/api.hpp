// The API server as the plugin talks to it: the cluster's URL, its CA, the user's
// credentials on every request (an exec plugin's refreshed when due or refused, and every
// one of them registered with the provider's secrets, so no message shows it), bounded
// calls retried on 429 (its Retry-After) and 5xx, answers of bounded size, streamed
// watches, and the WebSocket requests exec upgrades.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "corral/sdk.hpp"
#include "corral/sdk/http.hpp"
#include "corral/sdk/redact.hpp"
#include "corral/sdk/remote/api_client.hpp"
#include "corral/sdk/websocket.hpp"
#include "exec_credential.hpp"
#include "kubeconfig.hpp"

namespace corral::kubernetes {

// The most of one answer (or one watch event) read from the API server. Objects are at
// most 1.5 MiB (etcd's bound) and corral lists 100 at a time; this is far above any real
// answer, and all a server that sends gigabytes can cost.
inline constexpr std::size_t kMaxAnswerBytes = 16 * 1024 * 1024;

// A call of the API server: `path` from the server's root (/api/v1/namespaces/...), a JSON
// body, and whether it may be sent again after a 429, a 5xx or a broken connection (a
// create of a named object may: a second one is refused as AlreadyExists, never made
// twice). Api::send sets its limit and its cancellation.
using Call = sdk::remote::Call;

class Api {
 public:
  // `secrets` (the provider's) is told every credential `access` holds now, and each one
  // an exec plugin prints later; it must outlive the Api.
  Api(ClusterAccess access, std::int64_t request_timeout_seconds, std::string timeout_setting,
      sdk::Redactor& secrets);
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Sends `call`; returns the answer whatever its status (callers decide what fails). An
  // answer above kMaxAnswerBytes is unexpected_answer; Ctrl-C (host) ends it, and a
  // credential plugin it runs, at once.
  sdk::http::Response send(Call call, const sdk::Host& host);
  // Sends a watch or other long GET of `path`, streaming the body to `on_body`, for at most
  // `timeout_seconds`; returns the answer (its body empty when it was 2xx).
  sdk::http::Response stream(const std::string& path, long timeout_seconds, const sdk::http::BodyFn& on_body,
                             const std::function<bool()>& cancelled, const std::string& what);
  // A WebSocket request to `path` with the credentials and the cluster's TLS settings,
  // stopped by `cancelled` (a credential plugin run for it too).
  sdk::websocket::Request websocket(const std::string& path, const std::string& what,
                                    const std::function<bool()>& cancelled);

  const ClusterAccess& access() const { return access_; }

 private:
  // The request's headers and TLS settings with the current credentials; an exec plugin
  // that runs for them is stopped when `cancelled` says so.
  void authorize(std::vector<std::pair<std::string, std::string>>& headers, sdk::TlsSettings& tls,
                 const std::function<bool()>& cancelled);
  // Whether a 401 is worth one more try: an exec plugin's credential can be fetched anew.
  bool refresh_after_refusal();

  ClusterAccess access_;
  sdk::remote::Limit limit_;  // of every call: the request timeout
  sdk::Redactor& secrets_;
  sdk::http::Client client_;
  std::optional<ExecCredential> credential_;
  sdk::remote::ApiClient calls_;
};

}  // namespace corral::kubernetes
