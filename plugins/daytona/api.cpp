#include "api.hpp"

#include <chrono>
#include <thread>

#include "errors.hpp"

namespace corral::daytona {
namespace {

namespace http = sdk::http;
using Clock = std::chrono::steady_clock;

constexpr int kMaxRetries = 4;

// Sleeps `seconds` in slices; false when `cancelled` fired meanwhile.
bool pause(double seconds, const std::function<bool()>& cancelled) {
  const auto until = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  while (Clock::now() < until) {
    if (cancelled && cancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace

double retry_delay_seconds(const http::Response& response, int attempt) {
  const std::string after = response.header("retry-after");
  if (!after.empty() && after.find_first_not_of("0123456789") == std::string::npos && after.size() < 4)
    return std::min(10.0, static_cast<double>(std::stoi(after)));
  return std::min(10.0, 0.5 * static_cast<double>(1 << attempt));
}

std::vector<std::pair<std::string, std::string>> Api::headers() const {
  std::vector<std::pair<std::string, std::string>> h;
  h.emplace_back("Authorization", "Bearer " + settings_.api_key);
  if (!settings_.organization_id.empty()) h.emplace_back("X-Daytona-Organization-ID", settings_.organization_id);
  h.emplace_back("X-Daytona-Source", "corral");
  return h;
}

http::Response Api::send(const std::string& method, const std::string& url, const std::string& body,
                         const std::string& what, long timeout_seconds, Retry retry,
                         const std::function<bool()>& cancelled) {
  if (settings_.api_key.empty()) throw missing_api_key();
  for (int attempt = 0;; ++attempt) {
    http::Request r;
    r.method = method;
    r.url = url;
    r.headers = headers();
    r.body = body;
    r.timeout_seconds = timeout_seconds;
    r.what = what;
    r.cancelled = cancelled;
    http::Response response = client_.send_json(std::move(r));
    if (response.status != 429 || retry == Retry::never || attempt >= kMaxRetries) return response;
    if (!pause(retry_delay_seconds(response, attempt), cancelled))
      throw Error(ErrorCode::cancelled, what + ": cancelled");
  }
}

http::Response Api::send(http::Request request) {
  if (settings_.api_key.empty()) throw missing_api_key();
  auto h = headers();
  request.headers.insert(request.headers.begin(), h.begin(), h.end());
  return client_.send(request);
}

}  // namespace corral::daytona
