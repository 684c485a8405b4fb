// Running a kubeconfig's exec credential plugin (client.authentication.k8s.io/v1 and
// v1beta1 ExecCredential: how EKS, GKE and AKS log in) and reading what it prints. The
// plugin acts as the user, so it gets the user's environment plus the kubeconfig's
// `env`; what it prints is a secret and never reaches a message. It is stopped, with
// whatever it started, on Ctrl-C, after 60 s, and when it prints more than an
// ExecCredential can take; of its stderr only the end is kept, for the message.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "kubeconfig.hpp"

namespace corral::kubernetes {

struct ExecCredential {
  std::string token;            // secret
  std::string client_cert_pem;  // with client_key_pem, instead of or besides the token
  std::string client_key_pem;   // secret
  // When to ask the plugin again; nullopt: the credential does not expire in this process.
  std::optional<std::chrono::system_clock::time_point> expires;
};

// The most an exec plugin may print on stdout: an ExecCredential is a few KiB.
inline constexpr std::size_t kMaxCredentialBytes = 1024 * 1024;

// Runs `plugin` (at most 60 s) and parses its ExecCredential. Throws Error(cancelled) once
// `cancelled` says so, the plugin's process group stopped; Error(auth) naming the plugin
// and `origin` when it fails, prints no credential or more than kMaxCredentialBytes, or
// cannot be run.
ExecCredential run_exec_plugin(const ExecPlugin& plugin, const std::string& origin,
                               const std::function<bool()>& cancelled = {});

// The time RFC 3339 `text` names ("2026-12-01T10:00:00Z", fractions and offsets allowed);
// nullopt when it is not one.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& text);

}  // namespace corral::kubernetes
