// Sending a request again when the server says "not now" or the connection broke, within
// bounds: the one retry rule every plugin's control plane uses; and the one way to report
// a rate limit that is still there afterwards.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "corral/sdk/http.hpp"
#include "corral/os/wait.hpp"

namespace corral::sdk::http {
namespace {

// 0.5, 1, 2, 4, ... s before retry `attempt` (0-based), never more than the cap.
double backoff_seconds(int attempt, const RetryLimits& limits) {
  return std::min(limits.max_wait_seconds, 0.5 * static_cast<double>(1L << std::min(attempt, 20)));
}

}  // namespace

bool is_retryable_status(long status) { return status == 429 || status == 502 || status == 503 || status == 504; }

bool is_retryable_answer(const Request& request, long status, Retry retry) {
  if (is_retryable_status(status)) return true;
  // A delete (or a pause, a stop) that failed on the server's side is worth another try:
  // doing it twice is harmless, and a sandbox left running costs money (an API server's
  // 500 is often a storage timeout that the next try does not meet).
  const bool settles = request.method == "DELETE" || retry == Retry::settling;
  return settles && status >= 500 && status <= 599 && status != 501 && status != 505;
}

std::optional<double> retry_delay(const Response& response, int attempt, const RetryLimits& limits) {
  const std::string after = response.header("retry-after");
  if (!after.empty() && after.size() <= 9 && after.find_first_not_of("0123456789") == std::string::npos) {
    const double asked = static_cast<double>(std::stol(after));
    if (asked > limits.max_wait_seconds) return std::nullopt;
    return asked;
  }
  return backoff_seconds(attempt, limits);  // an HTTP-date or garbage: back off on our own
}

Response send_retrying(Client& client, Request request, Retry retry, const RetryLimits& limits) {
  for (int attempt = 0;; ++attempt) {
    const bool last = retry == Retry::never || attempt >= limits.max_retries;
    std::optional<double> delay;
    try {
      Response response = client.send_json(request);
      response.sent = attempt + 1;
      if (last || !is_retryable_answer(request, response.status, retry)) return response;
      delay = retry_delay(response, attempt, limits);
      if (!delay) return response;
    } catch (const ConnectionBroken& e) {
      if (last) {
        if (attempt == 0) throw;
        throw ConnectionBroken(e.code(), std::string(e.what()) + " (sent " + std::to_string(attempt + 1) + " times)",
                               e.hint());
      }
      delay = backoff_seconds(attempt, limits);
    }
    if (!os::sleep_unless_stopped(std::chrono::milliseconds(static_cast<long>(*delay * 1000)), request.cancelled))
      throw Error(ErrorCode::cancelled, request.what + ": cancelled");
  }
}

Error rate_limited(const Response& response, std::string_view what, std::string_view limit, std::string_view detail,
                   std::string_view advice) {
  std::string message = std::string(what) + ": " + std::string(limit) + " was reached (HTTP 429";
  if (!detail.empty()) message += ": " + std::string(detail);
  message += "); ";
  const RetryLimits limits;
  if (!retry_delay(response, 0, limits))
    message += "it asked corral to wait " + response.header("retry-after") + " s, longer than corral waits (" +
               std::to_string(static_cast<long>(limits.max_wait_seconds)) + " s), so corral did not retry";
  else if (response.sent > 1)
    message += "corral already retried it " + std::to_string(response.sent - 1) +
               (response.sent == 2 ? " time" : " times") + ", waiting between tries";
  else
    message += "not sent again by the plugin: a second create could make a second sandbox, a second start run the "
               "command twice";
  std::string hint = "wait a minute and rerun; for a fan-out (--shards), lower --max-parallel so fewer sandboxes "
                     "start at once";
  if (!advice.empty()) hint += "; " + std::string(advice);
  Error error(ErrorCode::quota, std::move(message), std::move(hint));
  // Only "not now": core may wait it out (for a create, every corral of the machine waits).
  const std::string after = response.header("retry-after");
  long seconds = 0;
  if (!after.empty() && after.size() <= 6 && after.find_first_not_of("0123456789") == std::string::npos)
    seconds = std::stol(after);
  error.set_retry_after(std::chrono::seconds(seconds));
  return error;
}

}  // namespace corral::sdk::http
