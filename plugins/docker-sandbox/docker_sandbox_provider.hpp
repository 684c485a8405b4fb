// The docker-sandbox provider: corral's primitives mapped onto `sbx` commands.
//   create  -> sbx create --name corral-<slug>-<hex> [flags] shell <workspace>
//   get     -> sbx ls --json (the entry with that name)
//   list    -> sbx ls --json (only names corral made, matching the labels)
//   exec    -> sbx exec [-w DIR] [--env-file F] <name> <argv...>, output streamed;
//              on cancel or timeout `sbx stop <name>` ends what the command left running
//   destroy -> sbx rm -f <name>
//   doctor  -> sbx version, sbx diagnose
#pragma once

#include <functional>
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
  ExecResult exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) override;

 private:
  // Every sandbox `sbx ls --json` reports.
  std::vector<SbxEntry> entries(const sdk::Host& host) const;
  // The folder `command` runs in inside the sandbox, or "" to leave it to sbx.
  std::string exec_dir(const Sandbox& sandbox, const std::string& cwd) const;
  // Stops the sandbox so nothing a stopped `sbx exec` started keeps running; warns on failure.
  void stop_quietly(const std::string& name, const sdk::Host& host) const;

  SbxCli cli_;
  std::string template_;
  std::string cpus_;
  std::string memory_;
  std::string workdir_;
};

}  // namespace corral::docker_sandbox
