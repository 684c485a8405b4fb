// The Kubernetes plugin's resolved settings, validated when the plugin opens: nothing
// reaches the cluster with a relative workdir, a malformed node selector or a time limit
// of zero.
#pragma once

#include <cstdint>
#include <string>

#include "corral/sdk.hpp"

namespace corral::kubernetes {

struct Settings {
  std::string kubeconfig;  // ':'-separated paths as KUBECONFIG gives them; empty: ~/.kube/config
  std::string context;     // empty: the kubeconfig's current-context
  std::string ns;          // empty: the context's namespace, else "default"
  std::string image;
  std::string cpu;     // Kubernetes quantity or empty
  std::string memory;  // Kubernetes quantity or empty
  StringMap node_selector;
  std::string service_account;
  std::string workdir;  // absolute, not a system folder
  std::int64_t lifetime_seconds = 3600;
  std::int64_t max_lifetime_seconds = 86400;  // activeDeadlineSeconds: keep-alive cannot pass it
  std::int64_t start_timeout_seconds = 300;
  std::int64_t request_timeout_seconds = 30;
  std::string service_account_dir;
  std::string warm_pool;  // an agent-sandbox SandboxWarmPool to claim Pods from; empty: bare Pods

  // Reads and validates the options; throws Error(invalid_argument) naming the setting.
  static Settings from(const sdk::Options& options);
};

}  // namespace corral::kubernetes
