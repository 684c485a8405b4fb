#include "corral/sdk/remote/error_table.hpp"

namespace corral::sdk::remote {

Error table_error(const ErrorTable& table, const http::Response& response, const std::string& what) {
  std::string detail = table.explanation(response.body);
  if (response.status == 429) {
    if (!table.rate_limit_noise.empty() && detail.rfind(table.rate_limit_noise, 0) == 0) detail.clear();
    return http::rate_limited(response, what, table.rate_limit, detail, table.rate_limit_advice);
  }
  std::string message = what + ": HTTP " + std::to_string(response.status);
  if (!detail.empty()) message += ": " + detail;
  for (const StatusRow& row : table.rows)
    if (response.status >= row.first && response.status <= row.last && (!row.applies || row.applies(response)))
      return Error(row.code.value_or(http::code_for_status(response.status)), std::move(message), row.hint);
  return Error(http::code_for_status(response.status), std::move(message));
}

}  // namespace corral::sdk::remote
