// A private local file (mode 0600) holding some text, removed with the object: how small
// generated files (a command's environment, a removal list) reach the sandbox by upload.
#pragma once

#include <string>

namespace corral::daytona {

class LocalTempFile {
 public:
  // Writes `content`; throws Error(internal) when no temporary file can be made.
  explicit LocalTempFile(const std::string& content);
  ~LocalTempFile();
  LocalTempFile(const LocalTempFile&) = delete;
  LocalTempFile& operator=(const LocalTempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace corral::daytona
