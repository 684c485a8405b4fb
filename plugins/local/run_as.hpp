// Doing file work inside a folder the jail's identity controls, as that identity: root
// never follows a path a jailed command could have swapped for a symlink.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>

#include "jail_user.hpp"

namespace corral::local {

// Runs `work` on a thread of its own that enters `dir` (as root), then becomes `user` with
// no supplementary groups; relative paths in `work` are below `dir`. The rest of the
// process keeps its identity. Open what only root may read before calling. Rethrows what
// `work` throws.
void run_as(const JailUser& user, const std::filesystem::path& dir, const std::function<void()>& work);
// The same, keeping the caller's identity when `user` is nullopt.
void run_as(const std::optional<JailUser>& user, const std::filesystem::path& dir, const std::function<void()>& work);

// Whose file access a run_copying_as thread has: the caller's, to read the files only it
// may read, or the user's, to write below the folder the user controls.
class FileAccess {
 public:
  explicit FileAccess(const std::optional<JailUser>& user) : user_(user) {}
  // Opens, reads and writes as the caller from now on (root's capabilities included).
  void as_caller();
  // As the user from now on: files made belong to it, links are its to fear. No-op without one.
  void as_user();

 private:
  std::optional<JailUser> user_;
};

// Runs `work` on a thread of its own that enters `dir` (as root) with a umask of 0 (files
// and folders get exactly the mode asked), drops its supplementary groups and takes
// `user`'s file-system identity (fsuid and fsgid) only, so `work` can
// switch to the caller's to read and back to write (FileAccess: a few system calls a
// switch, so switch for a batch of files, not each). The thread's other credentials stay
// the caller's. Without `user` nothing changes. With `threads` above 1, up to that many
// such threads run `work` at once (fewer when the system has no more to give: `work`
// shares out what there is to do itself), and all are joined. Rethrows what `work` threw
// (the first failure, when several did).
void run_copying_as(const std::optional<JailUser>& user, const std::filesystem::path& dir,
                    const std::function<void(FileAccess&)>& work, unsigned threads = 1);

}  // namespace corral::local
