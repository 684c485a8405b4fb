// The forwarded environment of one `sbx exec`, written to a private temporary file for
// `--env-file`: values never appear in argv (visible to every user through /proc).
#pragma once

#include <string>

#include "corral/types.hpp"

namespace corral::docker_sandbox {

// A mode-0600 file of NAME=value lines in $TMPDIR (or /tmp), removed by the destructor
// on every path, including exceptions and cancellation.
class EnvFile {
 public:
  // Writes `env`; throws invalid-argument for a name or value the format cannot carry.
  explicit EnvFile(const StringMap& env);
  ~EnvFile();
  EnvFile(const EnvFile&) = delete;
  EnvFile& operator=(const EnvFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The env-file text for `env` (docker's format: one NAME=value per line, no quoting);
// throws invalid-argument for an empty name, a name with '=', '#' or blanks, or a value
// with a newline or NUL.
std::string env_file_text(const StringMap& env);

}  // namespace corral::docker_sandbox
