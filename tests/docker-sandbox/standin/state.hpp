// The stand-in sbx's persistent state: one JSON record per sandbox in a folder named by
// SBX_STANDIN_STATE, plus logs the tests read (every argv, every env file seen).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sbx_standin {

struct Record {
  std::string name;
  std::string agent = "shell";
  std::string status = "running";  // creating | running | stopped
  std::vector<std::string> workspaces;
  std::string template_image;
  int cpus = 0;
  std::string memory;
};

class State {
 public:
  // The state folder from SBX_STANDIN_STATE; exits with a usage error when unset.
  static State from_env();
  explicit State(std::string dir);

  std::optional<Record> load(const std::string& name) const;
  void save(const Record& record) const;
  void remove(const std::string& name) const;
  std::vector<Record> all() const;  // sorted by name

  // Processes `sbx exec` started in a sandbox (each leads its own session).
  void add_pid(const std::string& name, int pid) const;
  void remove_pid(const std::string& name, int pid) const;
  // Kills every process group recorded for the sandbox, and every process they started
  // (also one that left for a session of its own), and forgets them: as stopping the VM.
  void kill_all(const std::string& name) const;

  // Appends one line to <dir>/<log>.
  void log(const std::string& log_name, const std::string& line) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string record_path(const std::string& name) const;
  std::string pids_path(const std::string& name) const;
  std::string dir_;
};

}  // namespace sbx_standin
