#include "corral/sdk/remote/paged_list.hpp"

#include "corral/errors.hpp"

namespace corral::sdk::remote {

void for_each_page(const std::string& what, const std::function<std::string(const std::string& token)>& fetch_page) {
  std::string token;
  for (int page = 0; page < kMaxPages; ++page) {
    std::string next = fetch_page(token);
    if (next.empty() || next == token) return;
    token = std::move(next);
  }
  throw Error(ErrorCode::unavailable, what + ": the list did not end after " + std::to_string(kMaxPages) + " pages");
}

}  // namespace corral::sdk::remote
