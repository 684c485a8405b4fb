// An empty private file (mode 0600) in the temporary folder, removed with the object:
// where one ssh invocation writes its own diagnostics (ssh -E), apart from the output of
// the remote command.
#pragma once

#include <string>

namespace corral_ssh {

class PrivateTempFile {
 public:
  // Creates the file; throws Error(internal) naming the folder when it cannot.
  PrivateTempFile();
  ~PrivateTempFile();
  PrivateTempFile(const PrivateTempFile&) = delete;
  PrivateTempFile& operator=(const PrivateTempFile&) = delete;

  const std::string& path() const { return path_; }
  // The file's content, at most `limit` bytes (a log that explains a failure is short).
  std::string read(size_t limit = 64 * 1024) const;

 private:
  std::string path_;
};

}  // namespace corral_ssh
