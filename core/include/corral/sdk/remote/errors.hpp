// The failures every remote provider reports alike, in the same words for each provider,
// and the one reading of a control plane's answer about one sandbox: 404 means the
// sandbox is not there; any other failure is the provider's own api_error.
#pragma once

#include <cstdint>
#include <string>

#include "corral/errors.hpp"
#include "corral/sdk/http.hpp"
#include "corral/sdk/remote/identity.hpp"

namespace corral::sdk::remote {

// Error(auth) "E2B_API_KEY is not set", the hint saying where to make a key.
Error missing_api_key(const Identity& provider);

// Error(not_found) "E2B sandbox ID no longer exists", the provider's gone_hint as the hint.
Error sandbox_gone(const Identity& provider, const std::string& sandbox_id);

// Error(timeout) "the command did not finish within 5m; it was stopped in E2B sandbox ID", after its --timeout ran out.
Error command_timed_out(const Identity& provider, std::int64_t timeout_seconds, const std::string& sandbox_id);

// Returns when `response` to call `what` about sandbox `id` is 2xx; throws sandbox_gone for 404, else api_error.
void expect_sandbox(const Identity& provider, const http::Response& response, const std::string& what,
                    const std::string& id);

// True when a delete's `response` says the sandbox was deleted, false when already gone (404); else throws api_error.
bool deleted(const Identity& provider, const http::Response& response, const std::string& what);

}  // namespace corral::sdk::remote
