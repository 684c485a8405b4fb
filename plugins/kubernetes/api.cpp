#include "api.hpp"

namespace corral::kubernetes {
namespace {

// Refresh an exec plugin's credential this long before it expires, as client-go does.
constexpr auto kRefreshMargin = std::chrono::seconds(60);

}  // namespace

Api::Api(ClusterAccess access, std::int64_t request_timeout_seconds, std::string timeout_setting,
         sdk::Redactor& secrets)
    : access_(std::move(access)),
      limit_{request_timeout_seconds, std::move(timeout_setting)},
      secrets_(secrets),
      calls_(client_, access_.server,
             [this](std::vector<std::pair<std::string, std::string>>& headers, sdk::TlsSettings& tls,
                    const std::function<bool()>& cancelled) { authorize(headers, tls, cancelled); },
             // The API server's 429 carries Retry-After; a cluster under load may ask for a while.
             {.retries = {6, 30}, .max_answer_bytes = kMaxAnswerBytes, .renew_credentials = [this] {
                return refresh_after_refusal();
              }}) {
  secrets_.add(access_.token);
  secrets_.add_pem(access_.tls.client_key_pem);
}

void Api::authorize(std::vector<std::pair<std::string, std::string>>& headers, sdk::TlsSettings& tls,
                    const std::function<bool()>& cancelled) {
  tls = access_.tls;
  std::string token = access_.token;
  if (access_.exec) {
    const bool due = credential_ && credential_->expires &&
                     std::chrono::system_clock::now() + kRefreshMargin >= *credential_->expires;
    if (!credential_ || due) {
      credential_ = run_exec_plugin(*access_.exec, access_.origin, cancelled);
      // Before the first request carries them: a server could quote them in its answer.
      secrets_.add(credential_->token);
      secrets_.add_pem(credential_->client_key_pem);
    }
    if (!credential_->token.empty()) token = credential_->token;
    if (!credential_->client_cert_pem.empty()) {
      tls.client_cert_pem = credential_->client_cert_pem;
      tls.client_key_pem = credential_->client_key_pem;
    }
  }
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
}

bool Api::refresh_after_refusal() {
  if (!access_.exec || !credential_) return false;
  credential_.reset();
  return true;
}

sdk::http::Response Api::send(Call call, const sdk::Host& host) {
  call.limit = limit_;
  call.cancellable = &host;
  return calls_.send(call);
}

sdk::http::Response Api::stream(const std::string& path, long timeout_seconds, const sdk::http::BodyFn& on_body,
                                const std::function<bool()>& cancelled, const std::string& what) {
  sdk::http::Request r;
  r.url = path;
  r.what = what;
  r.timeout_seconds = timeout_seconds;
  r.on_body = on_body;
  r.cancelled = cancelled;
  r.headers.emplace_back("Accept", "application/json");
  return calls_.send_once(std::move(r));
}

sdk::websocket::Request Api::websocket(const std::string& path, const std::string& what,
                                       const std::function<bool()>& cancelled) {
  sdk::websocket::Request r;
  r.url = calls_.url(path);
  r.what = what;
  r.cancelled = cancelled;
  r.connect_timeout_seconds = static_cast<long>(limit_.seconds);
  // A stream may be quiet for as long as its command is; the API server answers pings, so
  // one that answers nothing for a request timeout is gone (a cut cable, a dead node's
  // proxy), and the run ends instead of waiting for ever.
  r.idle_timeout_seconds = static_cast<long>(limit_.seconds);
  r.keepalive_pings = true;
  calls_.authorize(r.headers, r.tls, cancelled);
  return r;
}

}  // namespace corral::kubernetes
