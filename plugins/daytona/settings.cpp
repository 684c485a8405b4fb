#include "settings.hpp"

#include <cctype>
#include <vector>

#include "corral/sdk/http.hpp"

namespace corral::daytona {
namespace {

std::string without_trailing_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

Error bad_workdir(const std::string& path, const std::string& why) {
  return Error(ErrorCode::invalid_argument, "Daytona workdir '" + path + "' " + why,
               "set --daytona-workdir (or CORRAL_DAYTONA_WORKDIR) to a dedicated folder such as 'workspace' "
               "(relative to the sandbox user's home) or /home/daytona/workspace; every sync unpacks over it");
}

bool has_control(const std::string& s) {
  for (char c : s)
    if (std::iscntrl(static_cast<unsigned char>(c))) return true;
  return false;
}

// A name Daytona looks up (snapshot, image, region): printable, no spaces.
void validate_name(const std::string& value, const std::string& what, const std::string& setting) {
  if (value.empty()) return;
  if (has_control(value) || value.find(' ') != std::string::npos || value.size() > 512)
    throw Error(ErrorCode::invalid_argument, "Daytona " + what + " '" + value + "' is not a valid name",
                "set " + setting + " to a plain name");
}

std::int64_t positive_or_unset(const sdk::Options& options, const std::string& name, const std::string& setting) {
  std::int64_t v = options.get_int(name, 0);
  if (v < 0 || v > 1024)
    throw Error(ErrorCode::invalid_argument, "Daytona " + name + " must be between 1 and 1024",
                "set " + setting + " to a small positive number, or leave it unset for Daytona's default");
  return v;
}

// A time limit, between a second and a day: a longer wait is a hang, not patience.
long timeout_option(const sdk::Options& options, const std::string& name, long fallback) {
  return static_cast<long>(options.get_duration_within(name, fallback, 1, 86400, setting_name(name)));
}

}  // namespace

std::string setting_name(const std::string& option) { return sdk::setting_name("daytona", option); }

std::string allow_more_time(const std::string& option) { return "allow more time with " + setting_name(option); }

void validate_workdir(const std::string& path) {
  if (auto problem = workdir_problem(path, /*relative_ok=*/true)) throw bad_workdir(path, *problem);
}

void validate_user(const std::string& user) {
  bool ok = !user.empty() && user.size() <= 32 &&
            (std::islower(static_cast<unsigned char>(user[0])) || user[0] == '_');
  for (char c : user)
    ok = ok && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                c == '_' || c == '-' || c == '.');
  if (ok && user.find("..") != std::string::npos) ok = false;
  if (!ok)
    throw Error(ErrorCode::invalid_argument, "Daytona user '" + user + "' is not a user name",
                "set --daytona-user (or CORRAL_DAYTONA_USER) to a plain user name such as 'daytona'");
}

std::string resolve_workdir(const std::string& workdir, const std::string& home) {
  if (!workdir.empty() && workdir.front() == '/') return workdir;
  return without_trailing_slash(home) + "/" + workdir;
}

Settings Settings::from(const sdk::Options& options) {
  Settings s;
  s.api_key = options.get("api-key");
  s.api_url = without_trailing_slash(options.get("api-url", "https://app.daytona.io/api"));
  sdk::http::check_url(s.api_url, "DAYTONA_API_URL");
  s.organization_id = options.get("organization-id");
  validate_name(s.organization_id, "organization ID", "DAYTONA_ORGANIZATION_ID");
  s.target = options.get("target");
  validate_name(s.target, "target", "DAYTONA_TARGET");
  s.snapshot = options.get("snapshot");
  validate_name(s.snapshot, "snapshot", "--daytona-snapshot (or CORRAL_DAYTONA_SNAPSHOT)");
  s.image = options.get("image");
  validate_name(s.image, "image", "--daytona-image (or CORRAL_DAYTONA_IMAGE)");
  if (!s.snapshot.empty() && !s.image.empty())
    throw Error(ErrorCode::invalid_argument, "Daytona snapshot and image are both set",
                "choose one: --daytona-snapshot or --daytona-image");
  s.user = options.get("user");
  if (!s.user.empty()) validate_user(s.user);
  s.workdir = without_trailing_slash(options.get("workdir", "workspace"));
  validate_workdir(s.workdir);
  s.auto_stop_minutes = options.get_int("auto-stop", 60);
  if (s.auto_stop_minutes < 0 || s.auto_stop_minutes > 35791394)
    throw Error(ErrorCode::invalid_argument, "Daytona auto-stop must be 0 (never) or a number of minutes",
                "set --daytona-auto-stop (or CORRAL_DAYTONA_AUTO_STOP), e.g. 60");
  s.cpu = positive_or_unset(options, "cpu", "--daytona-cpu");
  s.memory_gib = positive_or_unset(options, "memory", "--daytona-memory");
  s.disk_gib = positive_or_unset(options, "disk", "--daytona-disk");
  s.create_timeout_seconds = timeout_option(options, "create-timeout", 120);
  s.request_timeout_seconds = timeout_option(options, "request-timeout", 30);
  s.start_timeout_seconds = timeout_option(options, "start-timeout", 600);
  return s;
}

}  // namespace corral::daytona
