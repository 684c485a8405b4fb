#include "errors.hpp"

#include <regex>

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
                   "check DAYTONA_API_KEY: it must be a current key (https://app.daytona.io/dashboard/keys) with "
                   "access to the organization (DAYTONA_ORGANIZATION_ID)");
    case ErrorCode::unavailable:
      return Error(ErrorCode::unavailable, message, "Daytona is having trouble; retry in a moment");
    default:
      return Error(http::code_for_status(response.status), message);
  }
}

Error missing_api_key() {
  return Error(ErrorCode::auth, "DAYTONA_API_KEY is not set",
               "export DAYTONA_API_KEY with a key from https://app.daytona.io/dashboard/keys");
}

Error sandbox_gone(const std::string& sandbox_id) {
  // The hint says why it went; corral's core says what to do about the lease.
  return Error(ErrorCode::not_found, "Daytona sandbox " + sandbox_id + " no longer exists",
               "it was deleted, in the Daytona dashboard or by its auto-delete interval");
}

}  // namespace corral::daytona
