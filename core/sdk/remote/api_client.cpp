#include "corral/sdk/remote/api_client.hpp"

#include "corral/sdk/remote/errors.hpp"

namespace corral::sdk::remote {

Limit limit_of(const Identity& identity, std::string_view option, std::int64_t seconds) {
  return {seconds, identity.settings.either(option)};
}

Authorize key_header(const Identity& identity, std::string key, std::string header, std::string prefix,
                     std::vector<std::pair<std::string, std::string>> extra) {
  return [&identity, key = std::move(key), header = std::move(header), prefix = std::move(prefix),
          extra = std::move(extra)](std::vector<std::pair<std::string, std::string>>& headers, TlsSettings&,
                                    const std::function<bool()>&) {
    if (key.empty()) throw missing_api_key(identity);
    headers.emplace_back(header, prefix + key);
    headers.insert(headers.end(), extra.begin(), extra.end());
  };
}

ApiClient::ApiClient(http::Client& http, std::string base_url, Authorize authorize, ClientOptions options)
    : http_(&http), base_url_(std::move(base_url)), authorize_(std::move(authorize)), options_(std::move(options)) {}

http::Response ApiClient::send(const Call& call) {
  // A refused call is sent once more only when the credentials could be renewed.
  for (bool renewed = false;; renewed = true) {
    http::Request r;
    r.method = call.method;
    r.url = url(call.path);
    r.body = call.body;
    r.what = call.what;
    r.timeout_seconds = static_cast<long>(call.limit.seconds);
    r.timeout_setting = call.limit.setting;
    r.max_body_bytes = options_.max_answer_bytes;
    if (const Host* host = call.cancellable) r.cancelled = [host] { return host->cancelled(); };
    if (!call.content_type.empty()) r.headers.emplace_back("Content-Type", call.content_type);
    authorize(r.headers, r.tls, r.cancelled);
    http::Response response = http::send_retrying(*http_, std::move(r), call.retry, options_.retries);
    if (response.status == 401 && !renewed && options_.renew_credentials && options_.renew_credentials()) continue;
    return response;
  }
}

http::Response ApiClient::send_once(http::Request request) {
  request.url = url(request.url);
  authorize(request.headers, request.tls, request.cancelled);
  return http_->send(request);
}

void ApiClient::authorize(std::vector<std::pair<std::string, std::string>>& headers, TlsSettings& tls,
                          const std::function<bool()>& cancelled) const {
  authorize_(headers, tls, cancelled);
}

}  // namespace corral::sdk::remote
