#include "errors.hpp"

#include <regex>

#include "corral/sdk/remote/error_table.hpp"
#include "spec.hpp"

namespace corral::daytona {

namespace http = sdk::http;

std::string error_message(std::string_view body) {
  json::Document doc;
  doc.Parse(body.data(), body.size());
  if (!doc.HasParseError() && doc.IsObject()) {
    auto it = doc.FindMember("message");
    if (it != doc.MemberEnd() && it->value.IsArray()) {
      std::string joined;
      for (const auto& m : it->value.GetArray())
        if (m.IsString()) joined += (joined.empty() ? "" : "; ") + std::string(m.GetString(), m.GetStringLength());
      if (!joined.empty()) return joined;
    }
  }
  return http::error_message(body);
}

bool is_quota_refusal(const http::Response& response) {
  if (response.status != 400 && response.status != 403) return false;
  static const std::regex limit("(limit|quota)[^.]*exceeded|exceed(s|ed)? [^.]*(limit|quota)", std::regex::icase);
  return std::regex_search(error_message(response.body), limit);
}

Error api_error(const http::Response& response, const std::string& what) {
  static const std::string key = "check " + identity().key_env() + ": it must be a current key (" +
                                 identity().key_url + ") with access to the organization (" +
                                 identity().settings.env("organization-id") + ")";
  static const std::string trouble = "Daytona is having trouble; retry in a moment";
  static const sdk::remote::ErrorTable table{
      .rate_limit = "Daytona's rate limit",
      .rate_limit_advice = "if it keeps happening, ask Daytona to raise your organization's rate limit",
      // Daytona's throttle answers "ThrottlerException: Too Many Requests": the name of the
      // class that refused, which tells the user nothing the status does not.
      .rate_limit_noise = "ThrottlerException",
      .rows = {{400, 403,
                "your Daytona organization is at a limit (CPU, memory or disk); stop kept sandboxes (`corral list`, "
                "`corral stop --id LEASE`) or raise the limits in the Daytona dashboard",
                &is_quota_refusal, ErrorCode::quota},
               {401, 401, key},
               {403, 403, key},
               {408, 408, trouble},
               {500, sdk::remote::kLastStatus, trouble}},
      .explanation = &error_message};
  return sdk::remote::table_error(table, response, what);
}

}  // namespace corral::daytona
