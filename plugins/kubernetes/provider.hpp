// The Kubernetes provider: corral's sandbox primitives on Pods of the user's own cluster,
// found as kubectl finds it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api.hpp"
#include "corral/sdk.hpp"
#include "corral/sdk/remote/command_hooks.hpp"
#include "exec_stream.hpp"
#include "settings.hpp"

namespace corral::kubernetes {

class KubernetesProvider : public sdk::Provider {
 public:
  // Validates every setting; the cluster is looked up at the first call that needs it.
  explicit KubernetesProvider(const sdk::Options& options);

  // The cluster, context, namespace and account the kubeconfig leads to now: a context
  // switched (kubectl config use-context) is another target, whose warm pools and leases
  // are not this one's. "" for a kubeconfig the first call will report as broken.
  std::string target() const override;

  std::vector<DoctorCheck> doctor(const sdk::Host& host) override;
  Sandbox create(const CreateRequest& request, const sdk::Host& host) override;
  Sandbox get(const std::string& id, const sdk::Host& host) override;
  std::vector<Sandbox> list(const StringMap& labels, const sdk::Host& host) override;
  void destroy(const Sandbox& sandbox, const sdk::Host& host) override;
  ExecResult exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) override;
  void upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host) override;
  DownloadResult download(const Sandbox& sandbox, const DownloadRequest& request, const sdk::Host& host) override;
  Sandbox extend(const Sandbox& sandbox, std::int64_t seconds, const sdk::Host& host) override;

 private:
  // The cluster's API, found on first use (kubeconfig or in-cluster); warns once when the
  // kubeconfig turns TLS verification off.
  Api& api(const sdk::Host& host);
  // `sandbox` with the credentials masked in its details, which come from the server.
  Sandbox masked(Sandbox sandbox);
  // The namespace Pods go in: the setting, the context's, else "default".
  const std::string& ns(const sdk::Host& host);
  // The namespace of `sandbox`: where it was made, else the current one.
  std::string ns_of(const Sandbox& sandbox, const sdk::Host& host);
  // Pod `name` made for `request`, Ready, with its NetworkPolicy; deleted again on failure.
  Sandbox start_pod(const std::string& name, const CreateRequest& request, const sdk::Host& host);
  // A Pod of the warm pool through SandboxClaim `claim`, labelled as corral's, Ready, with
  // its NetworkPolicy; the claim is deleted again on failure.
  Sandbox start_claimed(const std::string& claim, const CreateRequest& request, const sdk::Host& host);
  // The NetworkPolicy of Pod `pod` (uid `uid`) when `request` asks for one; then Pod
  // `pod` once Ready.
  Sandbox finish_start(const std::string& pod, const std::string& uid, const CreateRequest& request,
                       const sdk::Host& host);
  // Deletes the object at `path` (a `kind` named `name`) at once; warns instead of throwing.
  void delete_quietly(const std::string& path, const std::string& kind, const std::string& name, const sdk::Host& host);
  // Runs `argv` in `sandbox`; a Pod that went meanwhile is sandbox_gone (with why), a
  // stream cut with no status is connection_lost.
  int run_in(const Sandbox& sandbox, const std::vector<std::string>& argv, const sdk::remote::CommandHooks& hooks,
             const ExecInput& input, const std::string& what, const sdk::Host& host);
  // Whether the user's input can be the command's stdin in `sandbox`: the API server's exec
  // can close stdin (v5.channel.k8s.io; asked with a first exec when none told yet). Under
  // v4 the input is treated as a provider without exec-stdin treats it: refused when some
  // is waiting, else the command gets an empty stdin.
  bool stdin_can_end(const Sandbox& sandbox, const sdk::Host& host);
  // Passes the user's `signal` to the process group `pid_file` names, from a second exec;
  // warns when it cannot (the command is then killed after --stop-timeout).
  void signal_remote(const Sandbox& sandbox, const std::string& pid_file, int signal, const sdk::Host& host);
  // Throws sandbox_gone, saying why, when Pod `id` is gone or has ended; returns otherwise.
  void throw_if_gone(const std::string& namespace_, const std::string& id, const sdk::Host& host);
  // Ends the process group of a stopped command (Ctrl-C, --timeout) from a second exec.
  void kill_remote(const Sandbox& sandbox, const std::string& pid_file, const sdk::Host& host);

  Settings settings_;
  std::optional<Api> api_;
  std::string ns_;
  std::string exec_protocol_;  // the subprotocol the API server chose for the last exec
};

}  // namespace corral::kubernetes
