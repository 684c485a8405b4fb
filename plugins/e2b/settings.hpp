// The E2B plugin's resolved settings, validated when the plugin opens: nothing reaches
// the network with a relative workdir, a system folder or a path-like user name.
#pragma once

#include <cstdint>
#include <string>

#include "corral/sdk.hpp"

namespace corral::e2b {

inline constexpr int kEnvdPort = 49983;

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

// "--e2b-OPTION or CORRAL_E2B_OPTION": how a message names the setting `option`, such
// as the time limit a request ran out of (http::Request::timeout_setting).
std::string setting_name(const std::string& option);

}  // namespace corral::e2b
