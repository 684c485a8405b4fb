#include "errors.hpp"

#include <regex>

#include "spec.hpp"

namespace corral::e2b {

Error api_error(const sdk::http::Response& response, const std::string& what) {
  std::string hint;
  switch (sdk::http::code_for_status(response.status)) {
    case ErrorCode::auth:
      hint = "check " + identity().key_env() + ": it must be a current key of your team (" + identity().key_url + ")";
      break;
    case ErrorCode::quota:
      // 429 is E2B's answer to too many requests and to too many sandboxes at once alike.
      return sdk::http::rate_limited(response, what, "E2B's rate limit or your team's concurrent-sandbox limit",
                                     sdk::http::error_message(response.body),
                                     "stop kept sandboxes you no longer need (`corral list`, `corral stop --id "
                                     "LEASE`), or ask E2B for higher limits");
    case ErrorCode::unavailable:
      hint = "E2B is having trouble; retry in a moment (status: https://status.e2b.dev)";
      break;
    default:
      break;
  }
  return sdk::http::status_error(response, what, hint);
}

Error template_not_found(const std::string& template_id, const sdk::http::Response& response) {
  std::string message = "E2B template '" + template_id + "' was not found";
  if (std::string detail = sdk::http::error_message(response.body); !detail.empty())
    message += " (" + detail + ")";
  return Error(ErrorCode::not_found, message,
               "build it with `e2b template build`, or pick another template with " +
                   identity().settings.either("template") + " (default: base)");
}

std::optional<std::int64_t> lifetime_cap_seconds(const sdk::http::Response& response) {
  if (response.status != 400) return std::nullopt;
  const std::string message = sdk::http::error_message(response.body);
  static const std::regex refusal("cannot be greater than", std::regex::icase);
  if (!std::regex_search(message, refusal)) return std::nullopt;
  static const std::regex hours("greater than\\s+([0-9]+)\\s*hour", std::regex::icase);
  std::smatch m;
  std::int64_t n = 1;
  if (std::regex_search(message, m, hours)) {
    try {
      n = std::stoll(m[1].str());
    } catch (const std::exception&) {
      n = 1;
    }
  }
  return (n > 0 ? n : 1) * 3600;
}

}  // namespace corral::e2b
