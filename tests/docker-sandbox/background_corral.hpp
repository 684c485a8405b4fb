// A `corral` process running in the background with a CliEnv's environment, so a test
// can interrupt it (SIGINT, as Ctrl-C does) and then collect its result.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "cli.hpp"

namespace sbx_test {

class BackgroundCorral {
 public:
  // Starts `corral args...` in the env's workspace; output goes to files in `scratch`.
  BackgroundCorral(const corral::test::CliEnv& env, const std::vector<std::string>& args,
                   const corral::test::TempDir& scratch);
  ~BackgroundCorral();  // kills the process if the test did not wait for it
  pid_t pid() const { return pid_; }
  void signal(int sig) const;
  // Waits up to `seconds` for the exit; exit_code -1 when it did not exit in time.
  corral::test::CliResult wait(int seconds);

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
};

// Waits up to `seconds` for `path` to exist with content; true when it did.
bool wait_for_file(const std::string& path, int seconds);

}  // namespace sbx_test
