#include "spec.hpp"

#include "api_errors.hpp"
#include "corral/json.hpp"

namespace corral::kubernetes {

// The cluster is found as kubectl finds it (KUBECONFIG, ~/.kube/config, in-cluster), so a
// machine where kubectl works needs no setting.
const char* const kSpecJson = R"json({
  "name": "kubernetes",
  "family": "kubernetes",
  "kind": "delegated-run",
  "targets": ["linux"],
  "features": ["run-session", "archive-sync", "keep-alive", "cleanup", "run-downloads",
               "network-policy", "network-allowlist", "exec-stdin", "exec-signals", "exec-tty",
               "exec-concurrent"],
  "options": [
    {"name": "kubeconfig", "type": "string", "env": ["KUBECONFIG"], "trusted": true,
     "help": "kubeconfig files, ':'-separated, merged as kubectl merges them; default ~/.kube/config, else the in-cluster service account"},
    {"name": "context", "type": "string", "env": ["CORRAL_KUBERNETES_CONTEXT"], "trusted": true,
     "help": "kubeconfig context to use; default: its current-context"},
    {"name": "namespace", "type": "string", "env": ["CORRAL_KUBERNETES_NAMESPACE"], "trusted": true,
     "help": "namespace the Pods go in; default: the context's, else 'default'"},
    {"name": "image", "type": "string", "default": "debian:bookworm-slim", "env": ["CORRAL_KUBERNETES_IMAGE"],
     "help": "container image of each sandbox Pod; it needs sh and tar (and gzip)"},
    {"name": "cpu", "type": "string", "env": ["CORRAL_KUBERNETES_CPU"],
     "help": "CPU each Pod requests and is limited to (Kubernetes quantity: 500m, 2); default: none"},
    {"name": "memory", "type": "string", "env": ["CORRAL_KUBERNETES_MEMORY"],
     "help": "memory each Pod requests and is limited to (Kubernetes quantity: 512Mi, 2Gi); default: none"},
    {"name": "node-selector", "type": "string", "env": ["CORRAL_KUBERNETES_NODE_SELECTOR"],
     "help": "node labels a Pod's node must have, KEY=VALUE[,KEY=VALUE...]"},
    {"name": "service-account", "type": "string", "env": ["CORRAL_KUBERNETES_SERVICE_ACCOUNT"], "trusted": true,
     "help": "service account the Pods run as; default: the namespace's default, with no token mounted"},
    {"name": "workdir", "type": "string", "default": "/corral/workspace", "env": ["CORRAL_KUBERNETES_WORKDIR"],
     "help": "absolute folder in the Pod that receives the workspace"},
    {"name": "lifetime", "type": "duration", "default": "1h", "env": ["CORRAL_KUBERNETES_LIFETIME"],
     "help": "how long a Pod lives unless kept alive; keep-alive and reuse extend it"},
    {"name": "max-lifetime", "type": "duration", "default": "1d", "env": ["CORRAL_KUBERNETES_MAX_LIFETIME"],
     "help": "the Pod's activeDeadlineSeconds: it ends then whatever keep-alive said (the API server never raises it)"},
    {"name": "start-timeout", "type": "duration", "default": "5m", "env": ["CORRAL_KUBERNETES_START_TIMEOUT"],
     "help": "how long a new Pod may take to be scheduled, pull its image and become Ready; 1s to 1d"},
    {"name": "request-timeout", "type": "duration", "default": "30s", "env": ["CORRAL_KUBERNETES_REQUEST_TIMEOUT"],
     "help": "how long any single API server call may take, and how long a command's stream may go without a frame or an answer to a ping; 1s to 1d"},
    {"name": "warm-pool", "type": "string", "env": ["CORRAL_KUBERNETES_WARM_POOL"], "trusted": true,
     "help": "an agent-sandbox SandboxWarmPool to claim ready Pods from (a SandboxClaim per sandbox) instead of creating bare Pods; its template sets image and resources"},
    {"name": "service-account-dir", "type": "path", "default": "/var/run/secrets/kubernetes.io/serviceaccount",
     "env": ["CORRAL_KUBERNETES_SERVICE_ACCOUNT_DIR"], "trusted": true,
     "help": "where the in-cluster service account (token, ca.crt, namespace) is mounted, used when no kubeconfig exists"}
  ],
  "docs": {
    "category": "self-hosted cluster",
    "location": "self-hosted",
    "gpu": "no",
    "cleanupOwner": "corral; a Pod ends by itself when its lifetime passes, and at its activeDeadlineSeconds (max-lifetime) at the latest",
    "bestFit": "teams with their own cluster: each sandbox a Pod, shards spread over the nodes, CI runners in Pods need no setup",
    "caveat": "network policies need a policy-enforcing network plugin (Calico, Cilium, ...); domains cannot be allowed",
    "authentication": "the kubeconfig's credentials, as kubectl uses them (token, client certificate, exec plugin), or the in-cluster service account",
    "isolation": "a Pod (its containers) on one of your cluster's nodes",
    "network": "none or addresses (CIDRs), by a NetworkPolicy that the cluster's network plugin enforces; no domains"
  }
})json";

const sdk::remote::Identity& identity() {
  static const sdk::remote::Identity kubernetes = [] {
    sdk::SettingNames names(json::spec_from_json(kSpecJson));
    std::string gone = "a Pod ends when its lifetime (" + names.flag("lifetime") +
                       ", activeDeadlineSeconds) passes, when it is evicted, or when someone deletes it";
    sdk::remote::Identity id{"Kubernetes", std::move(names), "", std::move(gone), &api_error};
    id.key_option = "";
    return id;
  }();
  return kubernetes;
}

}  // namespace corral::kubernetes
