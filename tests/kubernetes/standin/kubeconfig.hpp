// Client configuration for the stand-in, as kubectl and the client libraries read it: a
// kubeconfig (clusters[].cluster.server and certificate-authority-data; users[].user with
// a token, a tokenFile, a client certificate and key, or an exec credential plugin), the
// exec plugin itself, and the in-cluster service account folder.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace corral::kubernetes::standin {

// How the kubeconfig's user authenticates; set one of them.
struct KubeconfigUser {
  std::string token;
  std::string token_file;
  std::string client_certificate_pem, client_key_pem;    // written inline (-data, base64)
  std::string client_certificate_file, client_key_file;  // or as paths
  std::string exec_command;                              // an ExecCredential plugin
  std::vector<std::string> exec_args;
  std::vector<std::pair<std::string, std::string>> exec_env;
  std::string exec_api_version = "client.authentication.k8s.io/v1";
};

// The kubeconfig text: one cluster ("standin") at `server` trusting `ca_pem`, one user,
// one context (current) in `ns`.
std::string kubeconfig_yaml(const std::string& server, const std::string& ca_pem, const std::string& ns,
                            const KubeconfigUser& user);

// A sh script that prints an ExecCredential (of `api_version`) with `token` (expiring at
// `expiration`, RFC 3339, when not empty), as a credential plugin does, and appends a line
// to `<script>.calls` each time it runs.
std::string exec_plugin_script(const std::string& token, const std::string& expiration = {},
                               const std::string& api_version = "client.authentication.k8s.io/v1");

std::string base64(const std::string& data);

}  // namespace corral::kubernetes::standin
