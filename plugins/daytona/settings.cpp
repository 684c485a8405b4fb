#include "settings.hpp"

#include <cctype>

#include "corral/sdk/remote/settings.hpp"
#include "spec.hpp"

namespace corral::daytona {
namespace {

using sdk::remote::without_trailing_slash;

// The workdirs the hint of a refused one suggests.
constexpr const char* kWorkdirExamples =
    "'workspace' (relative to the sandbox user's home) or /home/daytona/workspace";

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

// A time limit, between a second and a day.
long timeout_option(const sdk::Options& options, const std::string& name, long fallback) {
  return static_cast<long>(sdk::remote::time_limit(options, identity(), name, fallback));
}

}  // namespace

std::string setting_name(const std::string& option) { return identity().settings.either(option); }

std::string allow_more_time(const std::string& option) { return "allow more time with " + setting_name(option); }

void validate_workdir(const std::string& path) {
  sdk::remote::check_workdir(identity(), path, /*relative_ok=*/true, kWorkdirExamples);
}

void validate_user(const std::string& user) { sdk::remote::check_user(identity(), user, "'daytona'"); }

std::string resolve_workdir(const std::string& workdir, const std::string& home) {
  if (!workdir.empty() && workdir.front() == '/') return workdir;
  return without_trailing_slash(home) + "/" + workdir;
}

Settings Settings::from(const sdk::Options& options) {
  Settings s;
  s.api_key = options.get("api-key");
  const sdk::SettingNames& names = identity().settings;
  s.api_url = sdk::remote::url_option(options, identity(), "api-url", "https://app.daytona.io/api");
  s.organization_id = options.get("organization-id");
  validate_name(s.organization_id, "organization ID", names.env("organization-id"));
  s.target = options.get("target");
  validate_name(s.target, "target", names.env("target"));
  s.snapshot = options.get("snapshot");
  validate_name(s.snapshot, "snapshot", names.aside("snapshot"));
  s.image = options.get("image");
  validate_name(s.image, "image", names.aside("image"));
  if (!s.snapshot.empty() && !s.image.empty())
    throw Error(ErrorCode::invalid_argument, "Daytona snapshot and image are both set",
                "choose one: " + names.flag("snapshot") + " or " + names.flag("image"));
  s.user = options.get("user");
  if (!s.user.empty()) validate_user(s.user);
  s.workdir = without_trailing_slash(options.get("workdir", "workspace"));
  validate_workdir(s.workdir);
  s.auto_stop_minutes = options.get_int("auto-stop", 60);
  if (s.auto_stop_minutes < 0 || s.auto_stop_minutes > 35791394)
    throw Error(ErrorCode::invalid_argument, "Daytona auto-stop must be 0 (never) or a number of minutes",
                "set " + names.aside("auto-stop") + ", e.g. 60");
  s.cpu = positive_or_unset(options, "cpu", names.flag("cpu"));
  s.memory_gib = positive_or_unset(options, "memory", names.flag("memory"));
  s.disk_gib = positive_or_unset(options, "disk", names.flag("disk"));
  s.create_timeout_seconds = timeout_option(options, "create-timeout", 120);
  s.request_timeout_seconds = timeout_option(options, "request-timeout", 30);
  s.start_timeout_seconds = timeout_option(options, "start-timeout", 600);
  return s;
}

}  // namespace corral::daytona
