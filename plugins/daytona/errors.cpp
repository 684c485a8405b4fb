#include "errors.hpp"

#include <regex>

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
  if (response.status == 429) {
    // Daytona's throttle answers "ThrottlerException: Too Many Requests": the name of the
    // class that refused, which tells the user nothing the status does not.
    std::string detail = error_message(response.body);
    if (detail.rfind("ThrottlerException", 0) == 0) detail.clear();
    return http::rate_limited(response, what, "Daytona's rate limit", detail,
                              "if it keeps happening, ask Daytona to raise your organization's rate limit");
  }
  std::string message = what + ": HTTP " + std::to_string(response.status);
  if (std::string detail = error_message(response.body); !detail.empty()) message += ": " + detail;
  if (is_quota_refusal(response))
    return Error(ErrorCode::quota, message,
                 "your Daytona organization is at a limit (CPU, memory or disk); stop kept sandboxes (`corral "
                 "list`, `corral stop --id LEASE`) or raise the limits in the Daytona dashboard");
  switch (http::code_for_status(response.status)) {
    case ErrorCode::auth:
      return Error(ErrorCode::auth, message,
                   "check " + identity().key_env() + ": it must be a current key (" + identity().key_url +
                       ") with access to the organization (" + identity().settings.env("organization-id") + ")");
    case ErrorCode::unavailable:
      return Error(ErrorCode::unavailable, message, "Daytona is having trouble; retry in a moment");
    default:
      return Error(http::code_for_status(response.status), message);
  }
}

}  // namespace corral::daytona
