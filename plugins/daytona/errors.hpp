// Daytona's failures, each turned into an Error that says what happened and how to fix it.
// Daytona answers errors as JSON {statusCode, error, message}; `message` may be a list.
// The ones every remote provider shares (a missing key, a sandbox gone) are the SDK's
// (corral/sdk/remote/errors.hpp), worded with identity().
#pragma once

#include <string>
#include <string_view>

#include "corral/sdk/http.hpp"

namespace corral::daytona {

// Daytona's explanation in an error body: `message` (a string, or a list joined by "; "),
// else what sdk::http::error_message finds; "" if none.
std::string error_message(std::string_view body);

// True for Daytona's refusal of a request over the organization's limits: HTTP 400 (or
// 403) whose message says a limit or quota is exceeded ("Total CPU limit exceeded").
bool is_quota_refusal(const sdk::http::Response& response);

// A failed API or toolbox response: auth (401/403) with a hint naming DAYTONA_API_KEY,
// quota for limit refusals, 429 as Daytona's rate limit (saying what corral already did),
// and the status's own code otherwise.
Error api_error(const sdk::http::Response& response, const std::string& what);

}  // namespace corral::daytona
