// The Daytona provider: corral's sandbox primitives on top of Daytona's control plane and
// each sandbox's toolbox.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api.hpp"
#include "control_plane.hpp"
#include "corral/sdk.hpp"
#include "corral/sdk/http.hpp"
#include "settings.hpp"
#include "toolbox.hpp"

namespace corral::daytona {

class DaytonaProvider : public sdk::Provider {
 public:
  // Validates every setting before anything touches the network.
  explicit DaytonaProvider(const sdk::Options& options);

  std::vector<DoctorCheck> doctor(const sdk::Host& host) override;
  Sandbox create(const CreateRequest& request, const sdk::Host& host) override;
  Sandbox get(const std::string& id, const sdk::Host& host) override;
  std::vector<Sandbox> list(const StringMap& labels, const sdk::Host& host) override;
  void destroy(const Sandbox& sandbox, const sdk::Host& host) override;
  ExecResult exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) override;
  void upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host) override;
  // download.cpp
  DownloadResult download(const Sandbox& sandbox, const DownloadRequest& request, const sdk::Host& host) override;
  Sandbox extend(const Sandbox& sandbox, std::int64_t seconds, const sdk::Host& host) override;
  // lifecycle.cpp
  Sandbox pause(const Sandbox& sandbox, const sdk::Host& host) override;
  Sandbox resume(const Sandbox& sandbox, const sdk::Host& host) override;
  // fork.cpp
  std::vector<ForkOutcome> fork(const Sandbox& source, const std::vector<ForkTarget>& targets,
                                const sdk::Host& host) override;
  std::string url(const Sandbox& sandbox, int port, const sdk::Host& host) override;

 private:
  // What this process learned about a sandbox it works in.
  struct Live {
    bool started = false;      // seen `started` (or started by us) in this process
    std::string toolbox_url;   // {toolboxProxyUrl}/{id}
    std::string home;          // the sandbox user's home folder; empty until asked
  };
  // The toolbox of a started sandbox (started()).
  Toolbox toolbox_for(const Sandbox& sandbox, const sdk::Host& host);
  // Sandbox `id` started, and known started in this process: a stopped, archived or paused
  // one is started first (a reused sandbox may have been auto-stopped), one still
  // starting is waited for. Returns what Daytona said last.
  SandboxInfo started(const std::string& id, const sdk::Host& host);
  // The absolute workdir in the sandbox (a relative setting is below the user's home).
  std::string workdir_of(const Sandbox& sandbox, Toolbox& toolbox, const sdk::Host& host);
  Sandbox to_sandbox(const SandboxInfo& info) const;
  // Runs `argv`, a command of corral's own beside the user's (passing a signal on, a
  // kill), in a session of its own, its output dropped; when that fails, warns `failed`,
  // Daytona's reason, then `consequence`. `stoppable`: the host's cancel gives it up.
  void beside_command(Toolbox& toolbox, const std::vector<std::string>& argv, const std::string& step,
                      const std::string& failed, const std::string& consequence, const sdk::Host& host,
                      bool stoppable);
  // Deletes fork `id_or_name`, which the host will never learn of; a failure is only
  // warned about (the fork carries its lease's labels, so `stop --orphans` finds it).
  void discard_fork(const std::string& id_or_name, const sdk::Host& host);
  // Applies --idle pause to new sandbox `info` (lifecycle.cpp): Daytona's auto-pause
  // instead of its auto-stop where the sandbox can pause; a container keeps auto-stop.
  void pause_when_idle(SandboxInfo& info, const sdk::Host& host);

  Settings settings_;
  sdk::http::Client client_;
  Api api_;
  ControlPlane control_;
  std::map<std::string, Live> live_;
};

}  // namespace corral::daytona
