// Everything corral does on the host, as POSIX sh scripts with their data passed as
// quoted arguments ("$1", "$@"), never spliced into script text; and where a lease lives:
//
//   <remote-root>/<lease id>/labels.json   what create recorded (the lease's labels)
//   <remote-root>/<lease id>/workspace/    the synced working tree; commands run here
//   <remote-root>/<lease id>/runs/<run>.pid process group of a running command
//
// Each function returns a complete remote command line for SshClient.
#pragma once

#include <string>
#include <vector>

#include <corral/types.hpp>

namespace corral_ssh {

// Exit codes the scripts use to say what happened (the rest are tools' own failures).
inline constexpr int kLeaseMissing = 66;  // no lease folder with that id
inline constexpr int kLeaseExists = 73;   // create found the folder already there

// Remote commands must stay well below the 128 KiB a single argument may have on Linux
// (the login shell receives the whole line as one): 16 KiB of paths quote to at most 64 KiB.
inline constexpr size_t kRemovalBatchBytes = 16 * 1024;

class LeaseFolder {
 public:
  // `root` is the remote-root setting; `id` a checked sandbox id (no '/', no leading '-').
  LeaseFolder(std::string root, std::string id) : root_(std::move(root)), id_(std::move(id)) {}
  const std::string& root() const { return root_; }
  const std::string& id() const { return id_; }
  std::string dir() const { return root_ + "/" + id_; }
  std::string workspace() const { return dir() + "/workspace"; }
  std::string record() const { return dir() + "/labels.json"; }
  std::string runs() const { return dir() + "/runs"; }

 private:
  std::string root_;
  std::string id_;
};

// Creates the lease folder (private to the account) holding `record_line`; exits
// kLeaseExists when a folder with that id is there already.
std::string create_lease(const LeaseFolder& lease, const std::string& record_line);

// Prints the lease's record, or exits kLeaseMissing.
std::string read_record(const LeaseFolder& lease);

// Prints one line "<folder name>\t<record line>" per lease folder below `root`.
std::string list_leases(const std::string& root);

// Stops the lease's running commands and removes its folder; a missing folder is success.
std::string destroy_lease(const LeaseFolder& lease);

// Unpacks the archive arriving on stdin over the workspace, then removes `removed`
// (workspace-relative paths, one batch of sdk::removal_batches) with sdk::kRemovePathsScript.
std::string unpack_workspace(const LeaseFolder& lease, const std::vector<std::string>& removed);

// Removes `removed` (a further batch) from the workspace with sdk::kRemovePathsScript.
std::string remove_paths(const LeaseFolder& lease, const std::vector<std::string>& removed);

// Runs `argv` in `dir` with `env` added to the login environment, in a new process group
// whose id goes to the run's pid file while it runs; exits with the command's exit code.
std::string run_command(const LeaseFolder& lease, const std::string& run_id, const std::string& dir,
                        const corral::StringMap& env, const std::vector<std::string>& argv);

// Stops the process group of run `run_id` (TERM, then KILL after 3 s); waits up to 2 s
// for a run that is only starting to record its group.
std::string stop_run(const LeaseFolder& lease, const std::string& run_id);

// Prints the names of the tools the scripts need that the host lacks.
std::string missing_tools();

}  // namespace corral_ssh
