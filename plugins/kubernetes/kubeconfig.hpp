// Finding the cluster as kubectl does: the kubeconfig files KUBECONFIG lists (merged, the
// first file to name a thing wins) or ~/.kube/config, the current context or the one
// asked for, its cluster (server, CA) and user (token, token file, client certificate,
// exec credential plugin); with no kubeconfig at all, the in-cluster service account of
// a Pod. Credentials are read into memory only, and never appear in an error.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "corral/sdk/tls.hpp"

namespace corral::kubernetes {

// A client.authentication.k8s.io credential plugin as the kubeconfig's user.exec names it.
struct ExecPlugin {
  std::string command;  // run as given (on PATH), or relative to the kubeconfig's folder when it has a '/'
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string api_version;  // client.authentication.k8s.io/v1 or v1beta1
  std::string install_hint;
};

struct ClusterAccess {
  std::string server;  // https://host[:port][/path], no trailing slash
  sdk::TlsSettings tls;
  std::string token;  // secret: a bearer token (inline, or read from tokenFile)
  std::optional<ExecPlugin> exec;
  std::string ns;      // the context's namespace, or "" when it names none
  std::string origin;  // where it came from, for messages: "context 'x' of /home/u/.kube/config"
  // Who the credentials say this is, with no secret in it: the user entry and how it
  // authenticates (a token's or a certificate's digest, a token file's path, the exec
  // plugin's command line), or the in-cluster service account's folder. A token that an
  // exec plugin or the kubelet renews keeps it the same.
  std::string account;
};

struct KubeconfigSource {
  std::string paths;                // KUBECONFIG's value (':'-separated), or "" for ~/.kube/config
  std::string context;              // the context to use; "" = the current-context
  std::string service_account_dir;  // the in-cluster token, ca.crt and namespace
};

// The cluster and credentials `source` leads to. Throws Error(invalid_argument) naming the
// file and field for a kubeconfig that is incomplete or malformed, and Error(invalid_argument)
// saying how to configure one when there is neither a kubeconfig nor an in-cluster account.
ClusterAccess find_cluster(const KubeconfigSource& source);

}  // namespace corral::kubernetes
