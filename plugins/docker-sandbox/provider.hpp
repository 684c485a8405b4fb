// The docker-sandbox provider: corral's primitives mapped onto `sbx` commands.
//   create  -> sbx create --name corral-<slug>-<hex> [flags] shell <workspace>
//   get     -> sbx ls --json (the entry with that name)
//   list    -> sbx ls --json (only names corral made, matching the labels)
//   exec    -> sbx exec [-i] [-t] [-w DIR] [--env-file F] <name> sh -c <wrapper> <argv...>,
//              output streamed, the user's input piped in with -i (with -t, sbx's stdin
//              and stdout a terminal corral opens, resized as the user's); the user's
//              signal passed to the command's process group by `sbx exec <name> sh -c
//              <kill>`; on cancel or timeout `sbx stop <name>` ends what the command left
//              running; a non-zero exit is the command's when it left its status in the
//              sandbox (read back with one more sbx exec), else sbx failed (`sbx ls`
//              names why when it can) or ended under the command, which is stopped
//   create failure -> sbx rm -f <name> (whatever create may have registered)
//   destroy -> sbx rm -f <name>
//   pause   -> sbx stop <name> (a stopped sandbox keeps its files; get and list say
//              "paused" for sbx's "stopped")
//   resume  -> sbx exec <name> true (sbx exec starts a stopped sandbox first)
//   fork    -> none: sbx has no way to copy a sandbox, so the spec leaves the feature out
//   download -> sbx exec <name> sh -c <pack script> (on Ctrl-C, sbx stop <name> ends tar),
//              sbx cp <name>:/tmp/<archive> <local>, sbx exec <name> rm -f -- /tmp/<archive>
//   doctor  -> sbx version, sbx diagnose
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "corral/sdk.hpp"
#include "sbx_cli.hpp"
#include "sbx_list.hpp"

namespace corral::docker_sandbox {

class DockerSandboxProvider : public sdk::Provider {
 public:
  // Validates the settings (cpus, memory, workdir, cli-timeout); throws invalid-argument.
  explicit DockerSandboxProvider(const sdk::Options& options);

  std::vector<DoctorCheck> doctor(const sdk::Host& host) override;
  Sandbox create(const CreateRequest& request, const sdk::Host& host) override;
  Sandbox get(const std::string& id, const sdk::Host& host) override;
  std::vector<Sandbox> list(const StringMap& labels, const sdk::Host& host) override;
  void destroy(const Sandbox& sandbox, const sdk::Host& host) override;
  Sandbox pause(const Sandbox& sandbox, const sdk::Host& host) override;
  Sandbox resume(const Sandbox& sandbox, const sdk::Host& host) override;
  ExecResult exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) override;
  // download.cpp
  DownloadResult download(const Sandbox& sandbox, const DownloadRequest& request, const sdk::Host& host) override;

 private:
  // Every sandbox `sbx ls --json` reports; `cancelled` empty = not interruptible (cleanup).
  std::vector<SbxEntry> entries(const std::function<bool()>& cancelled) const;
  // Removes what a failed `sbx create` may have registered as `name`; warns when sbx still
  // lists it afterwards, or when it cannot tell and the create was `cut_short` (timed out
  // or interrupted rather than refused). Never throws.
  void remove_failed_create(const std::string& name, bool cut_short, const sdk::Host& host) const;
  // Why a non-zero `sbx exec` whose command did not finish failed, confirmed by `sbx ls`:
  // the sandbox is gone (not-found), or it is not running and sbx's first words
  // (`stderr_head`) name a known condition. nullopt = no cause sbx shows.
  std::optional<Error> exec_failure(const std::string& name, const std::string& stderr_head,
                                    const sdk::Host& host) const;
  // The exit status a failed command recorded in `path` inside sandbox `name` (the file is
  // removed), or nullopt when it recorded none (it did not finish) or sbx cannot read it.
  std::optional<int> recorded_status(const std::string& name, const std::string& path, const sdk::Host& host) const;
  // The folder `command` runs in inside the sandbox, or "" to leave it to sbx.
  std::string exec_dir(const Sandbox& sandbox, const std::string& cwd) const;
  // The sandbox `name` as `sbx ls` reports it now; throws not-found when it is gone.
  Sandbox listed(const std::string& name, const sdk::Host& host) const;
  // Passes `signal` to the process group `pid_file` names in sandbox `name`, from a second
  // `sbx exec`; warns when it cannot (the command is then stopped after --stop-timeout).
  void signal_command(const std::string& name, const std::string& pid_file, int signal, const sdk::Host& host) const;
  // Stops the sandbox so nothing a stopped `sbx exec` started keeps running; warns on failure.
  void stop_quietly(const std::string& name, const sdk::Host& host) const;

  SbxCli cli_;
  std::string template_;
  std::string cpus_;
  std::string memory_;
  std::string workdir_;
};

}  // namespace corral::docker_sandbox
