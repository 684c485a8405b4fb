// The E2B provider: corral's sandbox primitives on top of the control plane and envd.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "control_plane.hpp"
#include "corral/sdk.hpp"
#include "corral/sdk/http.hpp"
#include "envd.hpp"
#include "settings.hpp"

namespace corral::e2b {

// Sandbox IDs become part of host names: throws invalid-argument for anything but letters,
// digits and dashes (at most 63), which could change the host.
void check_sandbox_id(const std::string& id);

class E2bProvider : public sdk::Provider {
 public:
  // Validates every setting before anything touches the network.
  explicit E2bProvider(const sdk::Options& options);

  std::vector<DoctorCheck> doctor(const sdk::Host& host) override;
  Sandbox create(const CreateRequest& request, const sdk::Host& host) override;
  Sandbox get(const std::string& id, const sdk::Host& host) override;
  std::vector<Sandbox> list(const StringMap& labels, const sdk::Host& host) override;
  void destroy(const Sandbox& sandbox, const sdk::Host& host) override;
  ExecResult exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) override;
  void upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host) override;
  DownloadResult download(const Sandbox& sandbox, const DownloadRequest& request, const sdk::Host& host) override;
  Sandbox extend(const Sandbox& sandbox, std::int64_t seconds, const sdk::Host& host) override;
  std::string url(const Sandbox& sandbox, int port, const sdk::Host& host) override;
  Sandbox pause(const Sandbox& sandbox, const sdk::Host& host) override;
  Sandbox resume(const Sandbox& sandbox, const sdk::Host& host) override;
  std::vector<ForkOutcome> fork(const Sandbox& source, const std::vector<ForkTarget>& targets,
                                const sdk::Host& host) override;

 private:
  // envd access for a sandbox known in this process; a sandbox this process did not
  // create is connected first (resumed if paused, lifetime extended), once.
  struct Live {
    std::string access_token;  // secret
    std::string domain;
    bool connected = false;
  };
  Envd envd_for(const Sandbox& sandbox, const sdk::Host& host);
  // Runs `command` through envd (exec without secrets).
  ExecResult run(const Sandbox& sandbox, const Command& command, const sdk::Host& host);
  // The allow list `sandbox` was made with (its "network" detail), which its secrets'
  // rules are set beside; invalid-argument when it has none, or a secret names a *.domain.
  NetworkPolicy secrets_network(const Sandbox& sandbox, const std::vector<Secret>& secrets) const;
  // Connects to sandbox `id` (resuming it when paused, extending its lifetime to the
  // configured one) and remembers its envd access.
  void connect(const std::string& id, const sdk::Host& host);
  Sandbox to_sandbox(const SandboxInfo& info) const;
  // Deletes the sandboxes `ids` (forks this call made and cannot hand over); one that
  // will not go is a warning naming it.
  void delete_forks(const std::vector<std::string>& ids, const sdk::Host& host);
  // Throws sandbox_gone when the control plane says sandbox `id` no longer exists; returns
  // when it is there or the control plane cannot tell.
  void throw_if_gone(const std::string& id, const sdk::Host& host);
  // Runs `envd_work`; when it fails as unavailable (a broken stream, envd's 502), says
  // "gone" instead if the control plane confirms that sandbox `id` no longer exists.
  template <class Work>
  auto confirming_gone(const std::string& id, const sdk::Host& host, Work&& envd_work) -> decltype(envd_work()) {
    try {
      return envd_work();
    } catch (const Error& e) {
      if (e.code() == ErrorCode::unavailable) throw_if_gone(id, host);
      throw;
    }
  }
  // The sandbox's domain: what E2B reported for it, else E2B_DOMAIN.
  std::string domain_of(const Sandbox& sandbox) const;

  Settings settings_;
  sdk::http::Client client_;
  ControlPlane control_;
  std::map<std::string, Live> live_;
};

}  // namespace corral::e2b
