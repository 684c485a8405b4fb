#include "errors.hpp"

#include <regex>

#include "corral/sdk/remote/error_table.hpp"
#include "spec.hpp"

namespace corral::e2b {

Error api_error(const sdk::http::Response& response, const std::string& what) {
  static const std::string key =
      "check " + identity().key_env() + ": it must be a current key of your team (" + identity().key_url + ")";
  static const std::string trouble = "E2B is having trouble; retry in a moment (status: https://status.e2b.dev)";
  static const sdk::remote::ErrorTable table{
      // 429 is E2B's answer to too many requests and to too many sandboxes at once alike.
      .rate_limit = "E2B's rate limit or your team's concurrent-sandbox limit",
      .rate_limit_advice = "stop kept sandboxes you no longer need (`corral list`, `corral stop --id LEASE`), or "
                           "ask E2B for higher limits",
      .rows = {{401, 401, key}, {403, 403, key}, {408, 408, trouble}, {500, sdk::remote::kLastStatus, trouble}}};
  return sdk::remote::table_error(table, response, what);
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
