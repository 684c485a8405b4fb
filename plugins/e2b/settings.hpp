// The E2B plugin's resolved settings, validated when the plugin opens: nothing reaches
// the network with a relative workdir, a system folder or a path-like user name.
#pragma once

#include <cstdint>
#include <string>

#include "corral/sdk.hpp"

namespace corral::e2b {

inline constexpr int kEnvdPort = 49983;

// Where each timeout is set, as hints name it.
inline constexpr const char* kCreateTimeoutSetting = "--e2b-create-timeout or CORRAL_E2B_CREATE_TIMEOUT";
inline constexpr const char* kRequestTimeoutSetting = "--e2b-request-timeout or CORRAL_E2B_REQUEST_TIMEOUT";
inline constexpr const char* kStallTimeoutSetting = "--e2b-stall-timeout or CORRAL_E2B_STALL_TIMEOUT";

struct Settings {
  std::string api_key;      // secret: only ever sent as the X-API-Key header
  std::string api_url;      // control plane, no trailing slash
  std::string domain;       // sandbox host domain
  std::string sandbox_url;  // envd base URL override, no trailing slash; empty = per-sandbox host
  std::string template_id;
  std::string workdir;      // absolute, normalised, not a system folder
  std::string user;
  std::int64_t lifetime_seconds = 3600;
  std::int64_t create_timeout_seconds = 120;  // create, and connect (which may resume)
  std::int64_t request_timeout_seconds = 30;  // every other control-plane call
  std::int64_t stall_timeout_seconds = 150;   // silence on a command's stream, keep-alives included

  // Reads and validates the options; throws Error(invalid_argument) naming the setting.
  static Settings from(const sdk::Options& options);
};

// Throws invalid-argument unless `path` is an absolute, normalised folder that is safe to
// unpack workspaces over: not "/", not a top-level folder (/tmp, /usr, ...), not a home folder.
void validate_workdir(const std::string& path);

// Throws invalid-argument unless `user` looks like a POSIX user name (no '/', no "..").
void validate_user(const std::string& user);

}  // namespace corral::e2b
