#include "settings.hpp"

#include <cctype>
#include <vector>

#include "corral/sdk/http.hpp"

namespace corral::e2b {
namespace {

std::string without_trailing_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

Error bad_workdir(const std::string& path, const std::string& why) {
  return Error(ErrorCode::invalid_argument, "E2B workdir '" + path + "' " + why,
               "set --e2b-workdir (or CORRAL_E2B_WORKDIR) to a dedicated absolute folder such as "
               "/home/user/workspace; every sync unpacks the workspace over it");
}

void validate_domain(const std::string& domain) {
  bool ok = !domain.empty() && domain.front() != '.' && domain.front() != '-';
  for (char c : domain)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-');
  if (!ok)
    throw Error(ErrorCode::invalid_argument, "E2B domain '" + domain + "' is not a host name",
                "set E2B_DOMAIN to a domain such as e2b.app");
}

// A time limit: at least `min_seconds`, at most a day (a longer wait is a hang, not patience).
std::int64_t timeout_option(const sdk::Options& options, const char* name, std::int64_t fallback,
                            std::int64_t min_seconds, const char* setting) {
  return options.get_duration_within(name, fallback, min_seconds, 86400, setting);
}

}  // namespace

void validate_workdir(const std::string& path) {
  if (auto problem = workdir_problem(path, /*relative_ok=*/false)) throw bad_workdir(path, *problem);
}

void validate_user(const std::string& user) {
  bool ok = !user.empty() && user.size() <= 32 &&
            (std::islower(static_cast<unsigned char>(user[0])) || user[0] == '_');
  for (char c : user)
    ok = ok && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                c == '_' || c == '-' || c == '.');
  if (ok && user.find("..") != std::string::npos) ok = false;
  if (!ok)
    throw Error(ErrorCode::invalid_argument, "E2B user '" + user + "' is not a user name",
                "set --e2b-user (or CORRAL_E2B_USER) to a plain user name such as 'user' or 'root'");
}

Settings Settings::from(const sdk::Options& options) {
  Settings s;
  s.api_key = options.get("api-key");
  s.api_url = without_trailing_slash(options.get("api-url", "https://api.e2b.app"));
  sdk::http::check_url(s.api_url, "E2B_API_URL");
  s.domain = options.get("domain", "e2b.app");
  validate_domain(s.domain);
  s.sandbox_url = without_trailing_slash(options.get("sandbox-url"));
  if (!s.sandbox_url.empty()) sdk::http::check_url(s.sandbox_url, "E2B_SANDBOX_URL");
  s.template_id = options.get("template", "base");
  if (s.template_id.empty() || s.template_id.find_first_of("/?#% \t\n") != std::string::npos)
    throw Error(ErrorCode::invalid_argument, "E2B template '" + s.template_id + "' is not a template ID or alias",
                "set --e2b-template (or CORRAL_E2B_TEMPLATE) to a template such as 'base'");
  s.workdir = without_trailing_slash(options.get("workdir", "/home/user/workspace"));
  validate_workdir(s.workdir);
  s.user = options.get("user", "user");
  validate_user(s.user);
  s.lifetime_seconds = options.get_duration("lifetime", 3600);
  if (s.lifetime_seconds <= 0 || s.lifetime_seconds > 2147483647)
    throw Error(ErrorCode::invalid_argument, "E2B lifetime must be positive and below 68 years",
                "set --e2b-lifetime (or CORRAL_E2B_LIFETIME) to a duration such as 1h");
  s.create_timeout_seconds = timeout_option(options, "create-timeout", 120, 1, kCreateTimeoutSetting);
  s.request_timeout_seconds = timeout_option(options, "request-timeout", 30, 1, kRequestTimeoutSetting);
  // envd pings every third of it, and a ping's interval is whole seconds.
  s.stall_timeout_seconds = timeout_option(options, "stall-timeout", 150, 3, kStallTimeoutSetting);
  return s;
}

}  // namespace corral::e2b
