#include "corral/sdk/remote/errors.hpp"

namespace corral::sdk::remote {
namespace {

// The provider's reading of a failed answer, else the SDK's plain one.
Error failure(const Identity& provider, const http::Response& response, const std::string& what) {
  return provider.api_error ? provider.api_error(response, what) : http::status_error(response, what);
}

}  // namespace

Error missing_api_key(const Identity& provider) {
  const std::string env = provider.key_env();
  return Error(ErrorCode::auth, env + " is not set", "export " + env + " with a key from " + provider.key_url);
}

Error sandbox_gone(const Identity& provider, const std::string& sandbox_id) {
  // The hint says why it went; corral's core says what to do about the lease.
  return Error(ErrorCode::not_found, provider.title + " sandbox " + sandbox_id + " no longer exists",
               provider.gone_hint);
}

Error command_timed_out(const Identity& provider, std::int64_t timeout_seconds, const std::string& sandbox_id) {
  return Error(ErrorCode::timeout,
               "the command did not finish within " + format_duration(timeout_seconds) + "; it was stopped in " +
                   provider.title + " sandbox " + sandbox_id,
               "raise --timeout, or run without one");
}

void expect_sandbox(const Identity& provider, const http::Response& response, const std::string& what,
                    const std::string& id) {
  if (response.status == 404) throw sandbox_gone(provider, id);
  if (!response.ok()) throw failure(provider, response, what);
}

bool deleted(const Identity& provider, const http::Response& response, const std::string& what) {
  if (response.status == 404) return false;
  if (!response.ok()) throw failure(provider, response, what);
  return true;
}

}  // namespace corral::sdk::remote
