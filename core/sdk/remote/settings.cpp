#include "corral/sdk/remote/settings.hpp"

#include <cctype>

#include "corral/sdk/http.hpp"

namespace corral::sdk::remote {

std::string without_trailing_slash(std::string text) {
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

std::string url_option(const Options& options, const Identity& provider, std::string_view option,
                       const std::string& fallback) {
  std::string url = without_trailing_slash(options.get(std::string(option), fallback));
  // The API key goes wherever this points: only https, or http to this machine.
  http::check_url(url, provider.settings.env(option));
  return url;
}

void check_workdir(const Identity& provider, const std::string& path, bool relative_ok, std::string_view examples) {
  if (auto problem = workdir_problem(path, relative_ok))
    throw Error(ErrorCode::invalid_argument, provider.title + " workdir '" + path + "' " + *problem,
                "set " + provider.settings.aside("workdir") + " to a dedicated " + (relative_ok ? "" : "absolute ") +
                    "folder such as " + std::string(examples) + "; every sync unpacks the workspace over it");
}

void check_user(const Identity& provider, const std::string& user, std::string_view examples) {
  const auto lower = [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; };
  bool ok = !user.empty() && user.size() <= 32 && (lower(user[0]) || user[0] == '_');
  for (char c : user)
    ok = ok && (lower(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  if (!ok || user.find("..") != std::string::npos)
    throw Error(ErrorCode::invalid_argument, provider.title + " user '" + user + "' is not a user name",
                "set " + provider.settings.aside("user") + " to a plain user name such as " + std::string(examples));
}

std::int64_t time_limit(const Options& options, const Identity& provider, std::string_view option,
                        std::int64_t fallback, std::int64_t min_seconds) {
  // At most a day: a longer wait is a hang, not patience.
  constexpr std::int64_t kDay = 86400;
  return options.get_duration_within(std::string(option), fallback, min_seconds, kDay,
                                     provider.settings.either(option));
}

std::int64_t lifetime_option(const Options& options, const Identity& provider, std::string_view option,
                             std::int64_t fallback) {
  const std::int64_t seconds = options.get_duration(std::string(option), fallback);
  if (seconds <= 0 || seconds > 2147483647)
    throw Error(ErrorCode::invalid_argument,
                provider.title + " " + std::string(option) + " must be positive and below 68 years",
                "set " + provider.settings.aside(option) + " to a duration such as 1h");
  return seconds;
}

}  // namespace corral::sdk::remote
