#include "settings.hpp"

#include <cctype>

#include "corral/sdk/remote/settings.hpp"
#include "spec.hpp"

namespace corral::e2b {
namespace {

using sdk::remote::without_trailing_slash;

void validate_domain(const std::string& domain) {
  bool ok = !domain.empty() && domain.front() != '.' && domain.front() != '-';
  for (char c : domain)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-');
  if (!ok)
    throw Error(ErrorCode::invalid_argument, "E2B domain '" + domain + "' is not a host name",
                "set " + identity().settings.env("domain") + " to a domain such as e2b.app");
}

}  // namespace

std::string setting_name(const std::string& option) { return identity().settings.either(option); }

Settings Settings::from(const sdk::Options& options) {
  const sdk::remote::Identity& e2b = identity();
  Settings s;
  s.api_key = options.get("api-key");
  s.api_url = sdk::remote::url_option(options, e2b, "api-url", "https://api.e2b.app");
  s.domain = options.get("domain", "e2b.app");
  validate_domain(s.domain);
  if (!options.get("sandbox-url").empty())
    s.sandbox_url = sdk::remote::url_option(options, e2b, "sandbox-url", "");
  s.template_id = options.get("template", "base");
  if (s.template_id.empty() || s.template_id.find_first_of("/?#% \t\n") != std::string::npos)
    throw Error(ErrorCode::invalid_argument, "E2B template '" + s.template_id + "' is not a template ID or alias",
                "set " + e2b.settings.aside("template") + " to a template such as 'base'");
  s.workdir = without_trailing_slash(options.get("workdir", "/home/user/workspace"));
  sdk::remote::check_workdir(e2b, s.workdir, /*relative_ok=*/false, "/home/user/workspace");
  s.user = options.get("user", "user");
  sdk::remote::check_user(e2b, s.user, "'user' or 'root'");
  s.lifetime_seconds = sdk::remote::lifetime_option(options, e2b, "lifetime", 3600);
  s.pause_memory = options.get_bool("pause-memory", true);
  s.create_timeout_seconds = sdk::remote::time_limit(options, e2b, "create-timeout", 120);
  s.request_timeout_seconds = sdk::remote::time_limit(options, e2b, "request-timeout", 30);
  // envd pings every third of it, and a ping's interval is whole seconds.
  s.stall_timeout_seconds = sdk::remote::time_limit(options, e2b, "stall-timeout", 150, 3);
  return s;
}

}  // namespace corral::e2b
