// The ssh provider: a "sandbox" is a folder per lease on a host the team already owns,
// and every primitive is one ssh invocation running one of remote_scripts' scripts.
#pragma once

#include <string>
#include <vector>

#include <corral/sdk.hpp>

#include "lease_record.hpp"
#include "remote_scripts.hpp"
#include "settings.hpp"
#include "ssh_command.hpp"

namespace corral_ssh {

class SshProvider : public corral::sdk::Provider {
 public:
  // Validates every setting before any ssh process starts.
  explicit SshProvider(const corral::sdk::Options& options);

  // Checks that ssh is installed, the host lets us in and has tar, gzip and setsid.
  std::vector<corral::DoctorCheck> doctor(const corral::sdk::Host& host) override;
  // Makes <remote-root>/<lease id>/ with an empty workspace and the labels recorded.
  corral::Sandbox create(const corral::CreateRequest& request, const corral::sdk::Host& host) override;
  // The lease folder `id` with its recorded labels; not-found when it is gone.
  corral::Sandbox get(const std::string& id, const corral::sdk::Host& host) override;
  // The lease folders below the remote root whose labels match `labels`.
  std::vector<corral::Sandbox> list(const corral::StringMap& labels, const corral::sdk::Host& host) override;
  // Stops the lease's running commands and removes its folder; a missing folder is fine.
  void destroy(const corral::Sandbox& sandbox, const corral::sdk::Host& host) override;
  // Runs the command in the lease's workspace, output streamed; on Ctrl-C or timeout
  // stops its whole process group on the host, then throws cancelled / timeout.
  corral::ExecResult exec(const corral::Sandbox& sandbox, const corral::Command& command,
                          const corral::sdk::Host& host) override;
  // Sends the archive as ssh's stdin, unpacks it over the workspace and removes the
  // files deleted locally.
  void upload(const corral::Sandbox& sandbox, const corral::UploadRequest& request,
              const corral::sdk::Host& host) override;
  // Packs the matching files on the host with the SDK's script and streams the archive
  // back over ssh's stdout into the size-bounded local file.
  corral::DownloadResult download(const corral::Sandbox& sandbox, const corral::DownloadRequest& request,
                                  const corral::sdk::Host& host) override;

 private:
  // The folder of lease `id`; throws invalid-argument for an id that is not a lease id.
  LeaseFolder folder(const std::string& id) const;
  // What core sees of lease `id`: its labels, the host and the remote workspace.
  corral::Sandbox to_sandbox(const std::string& id, const LeaseRecord& record) const;
  // Ends run `run_id` on the host after the local ssh was stopped; warns when it cannot.
  void stop_remote_run(const LeaseFolder& lease, const std::string& run_id, const corral::sdk::Host& host) const;

  Settings settings_;
  SshClient ssh_;  // refers to settings_, declared before it
};

}  // namespace corral_ssh
