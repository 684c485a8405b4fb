// The ssh provider's resolved settings, validated when the plugin opens, before any ssh
// process starts. Settings left unset stay unset: ssh then applies ~/.ssh/config.
#pragma once

#include <string>

#include <corral/sdk.hpp>

namespace corral_ssh {

struct Settings {
  std::string host;              // ssh destination: a name, an address or a ~/.ssh/config alias
  int port = 0;                  // 0 = ssh's choice
  std::string user;              // empty = ssh's choice
  std::string identity_file;     // empty = ssh's choice
  std::string known_hosts_file;  // empty = ssh's default files
  std::string remote_root;       // lease folders live below it; relative = below the login folder
  bool use_agent = false;        // pass SSH_AUTH_SOCK to ssh

  // Reads and validates the options; throws Error(invalid_argument) naming the setting
  // and how to set it.
  static Settings from(const corral::sdk::Options& options);
};

}  // namespace corral_ssh
