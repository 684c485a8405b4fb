// How a remote provider words a failed answer of its API: one table of statuses, each
// with the code it means and what the user can do about it, read the same way for every
// provider. A 429 is always the provider's rate limit (http::rate_limited), so the user
// hears what corral already did about it; every other failure reads
// "<what>: HTTP <status>[: <the provider's explanation>]".
//
// Threads: a table is only read once made; table_error is safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/errors.hpp"
#include "corral/sdk/http.hpp"

namespace corral::sdk::remote {

// What statuses `first` to `last` mean, when `applies` (if set) holds of the answer.
struct StatusRow {
  long first = 0;
  long last = 0;
  std::string hint;
  // Only for the answers it holds of (Daytona's 400 that says a limit is exceeded).
  bool (*applies)(const http::Response& response) = nullptr;
  // The error's code when not the status's own (http::code_for_status).
  std::optional<ErrorCode> code;
};

// The highest status a server can send; `{500, kLastStatus}` covers every server error.
inline constexpr long kLastStatus = 999;

struct ErrorTable {
  std::string rate_limit;         // whose limit a 429 is: "E2B's rate limit"
  std::string rate_limit_advice;  // what to do past waiting: whom to ask for a higher limit
  // An explanation that begins so only names what refused (Daytona's "ThrottlerException"):
  // a 429 leaves it out. "": none.
  std::string rate_limit_noise;
  std::vector<StatusRow> rows;  // the first row that covers a status, and applies, wins
  // The provider's explanation in an error body: http::error_message unless its errors
  // say it otherwise (Daytona's list of messages).
  std::string (*explanation)(std::string_view body) = &http::error_message;
};

// The Error for failed answer `response` to call `what`, as `table` words it.
Error table_error(const ErrorTable& table, const http::Response& response, const std::string& what);

}  // namespace corral::sdk::remote
