#include "api.hpp"

#include "spec.hpp"

namespace corral::daytona {

Api::Api(sdk::http::Client& client, const Settings& settings)
    : client_(client),
      settings_(settings),
      create_limit_(sdk::remote::limit_of(identity(), "create-timeout", settings.create_timeout_seconds)),
      request_limit_(sdk::remote::limit_of(identity(), "request-timeout", settings.request_timeout_seconds)) {}

sdk::remote::ApiClient Api::at(std::string base_url) const { return at(std::move(base_url), client_); }

sdk::remote::ApiClient Api::at(std::string base_url, sdk::http::Client& client) const {
  std::vector<std::pair<std::string, std::string>> extra;
  if (!settings_.organization_id.empty()) extra.emplace_back("X-Daytona-Organization-ID", settings_.organization_id);
  extra.emplace_back("X-Daytona-Source", "corral");
  return sdk::remote::ApiClient(
      client, std::move(base_url),
      sdk::remote::key_header(identity(), settings_.api_key, "Authorization", "Bearer ", std::move(extra)));
}

}  // namespace corral::daytona
