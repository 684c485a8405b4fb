#include "kubeconfig.hpp"

#include <openssl/evp.h>

namespace corral::kubernetes::standin {

std::string base64(const std::string& data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

namespace {

// A YAML double-quoted scalar.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string kubeconfig_yaml(const std::string& server, const std::string& ca_pem, const std::string& ns,
                            const KubeconfigUser& user) {
  std::string y = "apiVersion: v1\nkind: Config\nclusters:\n- name: standin\n  cluster:\n    server: " + quoted(server) +
                  "\n    certificate-authority-data: " + base64(ca_pem) + "\n";
  y += "users:\n- name: standin-user\n  user:\n";
  if (!user.token.empty()) y += "    token: " + quoted(user.token) + "\n";
  if (!user.token_file.empty()) y += "    tokenFile: " + quoted(user.token_file) + "\n";
  if (!user.client_certificate_pem.empty()) y += "    client-certificate-data: " + base64(user.client_certificate_pem) + "\n";
  if (!user.client_key_pem.empty()) y += "    client-key-data: " + base64(user.client_key_pem) + "\n";
  if (!user.client_certificate_file.empty()) y += "    client-certificate: " + quoted(user.client_certificate_file) + "\n";
  if (!user.client_key_file.empty()) y += "    client-key: " + quoted(user.client_key_file) + "\n";
  if (!user.exec_command.empty()) {
    y += "    exec:\n      apiVersion: " + user.exec_api_version + "\n      command: " + quoted(user.exec_command) + "\n";
    // interactiveMode is required from v1 on (and unknown before it).
    if (user.exec_api_version == "client.authentication.k8s.io/v1") y += "      interactiveMode: Never\n";
    if (!user.exec_args.empty()) {
      y += "      args:\n";
      for (const auto& a : user.exec_args) y += "      - " + quoted(a) + "\n";
    }
    if (!user.exec_env.empty()) {
      y += "      env:\n";
      for (const auto& [k, v] : user.exec_env) y += "      - name: " + quoted(k) + "\n        value: " + quoted(v) + "\n";
    }
  }
  y += "contexts:\n- name: standin\n  context:\n    cluster: standin\n    user: standin-user\n    namespace: " + quoted(ns) +
       "\ncurrent-context: standin\npreferences: {}\n";
  return y;
}

std::string exec_plugin_script(const std::string& token, const std::string& expiration, const std::string& api_version) {
  std::string status = "\"token\":\"" + token + "\"";
  if (!expiration.empty()) status += ",\"expirationTimestamp\":\"" + expiration + "\"";
  return "#!/bin/sh\n"
         "# A client-go credential plugin: prints an ExecCredential on stdout.\n"
         "echo run >> \"$0.calls\"\n"
         "printf '%s\\n' '{\"apiVersion\":\"" + api_version + "\",\"kind\":\"ExecCredential\",\"status\":{" +
         status + "}}'\n";
}

}  // namespace corral::kubernetes::standin
