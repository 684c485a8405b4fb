// The stand-in sbx as tests use it: a fresh state folder, its logs, and direct calls.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli.hpp"

namespace sbx_test {

// The stand-in executable (named `sbx`).
std::string standin_path();

class StandIn {
 public:
  StandIn();
  ~StandIn();  // kills the stand-ins still hanging: a corral killed mid-call leaves them
  StandIn(const StandIn&) = delete;
  StandIn& operator=(const StandIn&) = delete;
  const std::filesystem::path& state() const { return dir_.path(); }
  // The environment the stand-in needs, plus `extra` (e.g. fault switches).
  std::map<std::string, std::string> env(const std::map<std::string, std::string>& extra = {}) const;
  // Runs the stand-in directly with `args` (tests' own setup and fidelity checks).
  corral::test::CliResult run(const std::vector<std::string>& args,
                              const std::map<std::string, std::string>& extra = {}) const;
  // The same with its stdin read from `stdin_path`.
  corral::test::CliResult run_reading(const std::vector<std::string>& args, const std::string& stdin_path) const;
  // Every argv the stand-in was called with, in order (argv[0] included).
  std::vector<std::vector<std::string>> calls() const;
  // The calls whose first argument (after argv[0]) is `command`.
  std::vector<std::vector<std::string>> calls_of(const std::string& command) const;
  // "path mode" lines of the env files exec read.
  std::vector<std::string> env_files() const;
  // Names of the sandboxes in the stand-in's state.
  std::vector<std::string> sandboxes() const;
  // The status of sandbox `name` ("" when it does not exist).
  std::string status(const std::string& name) const;
  // The pids of the commands `sbx exec` started in sandbox `name` that still run (each
  // leads its own process group).
  std::vector<int> exec_pids(const std::string& name) const;
  // The log a stand-in writes as it starts to hang (SBX_STANDIN_HANG): wait for it.
  std::filesystem::path hangs_log() const { return dir_.path() / "hangs.log"; }
  // The pids of the stand-ins that started to hang, in order.
  std::vector<int> hung_pids() const;

 private:
  corral::test::CliResult run_with(const std::vector<std::string>& args, const std::map<std::string, std::string>& extra,
                                   const std::string& stdin_path) const;
  corral::test::TempDir dir_;
};

// True when `argv` has an element containing `needle`.
bool argv_mentions(const std::vector<std::string>& argv, const std::string& needle);

// True while process `pid` exists and is not a zombie.
bool process_alive(int pid);
// True once process `pid` has ended, polling for up to five seconds: a kill is delivered
// asynchronously, and a loaded machine may take a moment to finish it.
bool process_ends(int pid);

}  // namespace sbx_test
