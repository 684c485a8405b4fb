// A Kubernetes API server stand-in on 127.0.0.1 for the kubernetes provider's tests:
// HTTPS with a CA it makes at start, the credentials it was given (a bearer token; client
// certificates its CA signs; service account tokens of its pods), pods whose commands run
// for real in folders of their own, watches, exec over WebSocket, NetworkPolicies it
// enforces as it can, the agent-sandbox CRDs, and fault switches. See README.md.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kubeconfig.hpp"
#include "kubelet.hpp"
#include "pki.hpp"
#include "state.hpp"

namespace corral::kubernetes::standin {

class TlsServer;

struct Options {
  int port = 0;  // 0: any free port
  std::string token = "corral-standin-token-6a1f0c9e";
  std::string user = "corral-test";  // whom the token names
  std::string ns = "corral";         // the kubeconfig's namespace (made at start, with "default")
  std::filesystem::path dir;         // where ca.crt, kubeconfig and token go; empty: a temporary folder
};

class StandIn {
 public:
  explicit StandIn(Options options = {});
  ~StandIn();
  StandIn(const StandIn&) = delete;
  StandIn& operator=(const StandIn&) = delete;

  std::string url() const;                   // https://127.0.0.1:PORT
  const std::string& token() const { return options_.token; }
  const std::string& ca_pem() const { return pki_.ca_pem(); }
  std::filesystem::path ca_file() const;     // the CA certificate (PEM)
  std::filesystem::path token_file() const;  // the token, for a kubeconfig's tokenFile
  std::filesystem::path kubeconfig() const;  // server, CA data and the token
  const std::filesystem::path& dir() const { return dir_; }

  // A kubeconfig for another way to authenticate, written to `path`.
  std::filesystem::path write_kubeconfig(const std::filesystem::path& path, const KubeconfigUser& user,
                                         const std::string& ns = {}) const;
  // A client certificate this CA signs (CN `user`, O `groups`).
  CertAndKey issue_client_certificate(const std::string& user, const std::vector<std::string>& groups = {},
                                      long valid_seconds = 86400) const;
  // The in-cluster service account folder (token, ca.crt, namespace) for `account` in
  // `ns`, written under `dir`, its token accepted from now on.
  std::filesystem::path write_service_account(const std::filesystem::path& dir, const std::string& ns,
                                              const std::string& account = "default");

  void add_token(const std::string& token, const std::string& user, const std::vector<std::string>& groups = {});
  void revoke_token(const std::string& token);
  void add_namespace(const std::string& ns);
  void add_service_account(const std::string& ns, const std::string& account);
  // Forgets the change history: a watch or continue from an older resourceVersion gets 410.
  void compact();
  // Evicts a running pod (Failed, reason Evicted); false when there is none.
  bool evict(const std::string& ns, const std::string& pod, ExecEnding ending = ExecEnding::killed);

  // Runs `f(state)` with the state locked: faults, access rules, what was received.
  template <class F>
  auto with(F&& f) {
    std::lock_guard lock(state_->mutex());
    return f(*state_);
  }
  // Calls of a route ("create pods", "create pods/exec", ...) so far.
  int calls(const std::string& route);
  // The stand-in's answers that broke a schema (none, unless the stand-in has a bug or
  // the corrupt_answer_field fault is armed).
  std::vector<std::string> answer_violations();
  // A pod's root folder on this machine (its "/"), empty when there is no such pod.
  std::filesystem::path pod_root(const std::string& ns, const std::string& pod);

 private:
  Options options_;
  std::filesystem::path dir_;
  bool own_dir_ = false;
  Pki pki_;
  std::unique_ptr<State> state_;
  std::unique_ptr<TlsServer> server_;
  std::thread kubelet_;
};

// Where the schemas the stand-in checks against live (tests/kubernetes/schemas).
std::filesystem::path schema_dir();

}  // namespace corral::kubernetes::standin
