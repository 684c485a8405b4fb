// The API server's failures in the user's words: its metav1.Status (reason and message)
// with a hint for what to change: the credentials, the Role, the request.
#pragma once

#include <string>

#include "corral/sdk/http.hpp"

namespace corral::kubernetes {

// The Error for failed answer `response` to call `what`.
Error api_error(const sdk::http::Response& response, const std::string& what);

// The Status reason of an error answer ("NotFound", "AlreadyExists"), or "".
std::string status_reason(const sdk::http::Response& response);

}  // namespace corral::kubernetes
