// E2B's failures, each turned into an Error that says what happened and how to fix it.
// The ones every remote provider shares (a missing key, a sandbox gone) are the SDK's
// (corral/sdk/remote/errors.hpp), worded with identity().
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "corral/sdk/http.hpp"

namespace corral::e2b {

// A failed control-plane or envd response, with the hint its status calls for; 429 says
// it is E2B's limit and what corral already did about it.
Error api_error(const sdk::http::Response& response, const std::string& what);

// The template asked for does not exist.
Error template_not_found(const std::string& template_id, const sdk::http::Response& response);

// When `response` is E2B's refusal of a lifetime above the account cap (HTTP 400
// "Timeout cannot be greater than N hours"), the cap in seconds (1 hour when the message
// names no number); else nullopt.
std::optional<std::int64_t> lifetime_cap_seconds(const sdk::http::Response& response);

}  // namespace corral::e2b
