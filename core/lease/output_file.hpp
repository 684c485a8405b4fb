// Files corral writes for the user (the session handle of --lease-output). Two kinds:
//  - a stream: a descriptor named as a file (/dev/stdout, /dev/stderr, /dev/fd/N,
//    /proc/self/fd/N), written through that descriptor where the command's own output
//    left off; or a FIFO, a device or a socket, or anything under /proc, opened and
//    written through. Never replaced: a stream is written once.
//  - a regular file, existing or to be made in an existing folder, replaced atomically
//    (a symlink to one stays a link: its target is replaced), so a reader never sees half.
//
// Threads: an OutputFile is a path and its checks; write() may be called from several
// threads, but two writes at once may interleave on a stream, and on a regular file the
// last rename wins: callers that write from several threads (a fan-out's early handles)
// serialise their writes.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace corral {

class OutputFile {
 public:
  // Checks `path` before anything is created: throws invalid-argument naming `what` for a
  // folder, a missing parent folder or a descriptor that is not open.
  OutputFile(std::filesystem::path path, std::string what);

  // True for a regular file, which may be written more than once (each write replaces it).
  bool rewritable() const;
  // Writes `text` as above. Waiting for a FIFO's reader, or for a slow reader, ends with
  // cancelled as soon as `give_up` says so (any stop signal: after one, corral offers the
  // text once and waits for nobody). Throws invalid-argument (quota for a
  // full disk) naming `what` and the path.
  void write(std::string_view text, const std::function<bool()>& give_up = {}) const;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::string what_;
};

}  // namespace corral
