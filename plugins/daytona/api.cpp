#include "api.hpp"

#include "corral/sdk/remote/errors.hpp"
#include "spec.hpp"

namespace corral::daytona {
namespace http = sdk::http;

std::vector<std::pair<std::string, std::string>> Api::headers() const {
  std::vector<std::pair<std::string, std::string>> h;
  h.emplace_back("Authorization", "Bearer " + settings_.api_key);
  if (!settings_.organization_id.empty()) h.emplace_back("X-Daytona-Organization-ID", settings_.organization_id);
  h.emplace_back("X-Daytona-Source", "corral");
  return h;
}

http::Response Api::send(const std::string& method, const std::string& url, const std::string& body,
                         const std::string& what, Limit limit, Retry retry,
                         const std::function<bool()>& cancelled) {
  if (settings_.api_key.empty()) throw sdk::remote::missing_api_key(identity());
  const bool create = limit == Limit::create;
  http::Request r;
  r.method = method;
  r.url = url;
  r.headers = headers();
  r.body = body;
  r.timeout_seconds = create ? settings_.create_timeout_seconds : settings_.request_timeout_seconds;
  r.timeout_setting = setting_name(create ? "create-timeout" : "request-timeout");
  r.what = what;
  r.cancelled = cancelled;
  return http::send_retrying(client_, std::move(r), retry);
}

http::Response Api::send(http::Request request) {
  if (settings_.api_key.empty()) throw sdk::remote::missing_api_key(identity());
  auto h = headers();
  request.headers.insert(request.headers.begin(), h.begin(), h.end());
  return client_.send(request);
}

}  // namespace corral::daytona
