// The Daytona plugin's resolved settings, validated when the plugin opens: nothing reaches
// the network with a malformed URL, an unsafe workdir or a path-like user name.
#pragma once

#include <cstdint>
#include <string>

#include "corral/sdk.hpp"

namespace corral::daytona {

struct Settings {
  std::string api_key;          // secret: only ever sent as Authorization: Bearer
  std::string api_url;          // control plane incl. /api, no trailing slash
  std::string organization_id;  // empty = the key's own organization
  std::string target;           // region; empty = the organization's default
  std::string snapshot;         // empty = Daytona's default snapshot
  std::string image;            // empty = none; exclusive with snapshot
  std::string user;             // empty = the snapshot's user
  std::string workdir;          // absolute, or relative to the sandbox user's home
  std::int64_t auto_stop_minutes = 60;
  std::int64_t cpu = 0, memory_gib = 0, disk_gib = 0;  // 0 = Daytona's default
  // Time limits, in seconds: the create call; every other call (control plane and toolbox);
  // a new or restarted sandbox reaching `started`.
  long create_timeout_seconds = 120, request_timeout_seconds = 30, start_timeout_seconds = 600;

  // Reads and validates the options; throws Error(invalid_argument) naming the setting.
  static Settings from(const sdk::Options& options);
};

// "--daytona-OPTION or CORRAL_DAYTONA_OPTION": how a message names the setting `option`, such
// as the time limit a request ran out of (http::Request::timeout_setting).
std::string setting_name(const std::string& option);

// "allow more time with --daytona-OPTION or CORRAL_DAYTONA_OPTION": the end of the hint
// of a time limit that ran out.
std::string allow_more_time(const std::string& option);

// Throws invalid-argument unless `path` is a safe folder to unpack workspaces over:
// normalised (no empty, "." or ".." parts, none starting with '-'), and when absolute
// neither "/" nor a top-level folder nor a home folder itself.
void validate_workdir(const std::string& path);

// Throws invalid-argument unless `user` looks like a POSIX user name (no '/', no "..").
void validate_user(const std::string& user);

// `workdir` resolved against the sandbox user's `home` (absolute workdirs stay as they are).
std::string resolve_workdir(const std::string& workdir, const std::string& home);

}  // namespace corral::daytona
