// A private local file (mode 0600, a fresh name nobody else can have open) in the
// temporary folder, removed with the object: where a plugin keeps a tool's diagnostics
// (ssh -E) or stages a small generated file (an environment, a removal list) for upload.
//
// Threads: a TempFile belongs to one thread at a time; files made at once, by threads or
// processes, never share a name.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace corral::os {

class TempFile {
 public:
  // An empty file in $TMPDIR (else /tmp) named corral-<tag>-XXXXXX; throws
  // Error(internal) naming the folder when none can be made, or `content` cannot be written.
  explicit TempFile(std::string_view tag, std::string_view content = {});
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }
  // The file's content, at most `limit` bytes.
  std::string read(std::size_t limit = 64 * 1024) const;

 private:
  std::string path_;
};

}  // namespace corral::os
