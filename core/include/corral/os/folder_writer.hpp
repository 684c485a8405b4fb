// Writing below one open folder without ever following a symbolic link: every folder on
// the way is opened relative to the one before with O_NOFOLLOW, so a link planted below
// the folder, before or while it is written, makes a write fail instead of landing
// elsewhere. What downloads, and the local provider's workspaces, are unpacked with.
//
// Threads: an OpenFolders or a FolderWriter belongs to one thread (it keeps folders open
// between names); several, on threads of their own, may write below one folder at once.
#pragma once

#include <time.h>

#include <cstdint>

#include <sys/types.h>

#include <string>
#include <vector>

#include "corral/os/unique_fd.hpp"

namespace corral::os {

// The folder `part` in `parent`, created (`mode` less the umask) when `create` and it is
// missing; never through a link. An invalid UniqueFd with errno set on failure: ELOOP or
// ENOTDIR when `part` is a link or not a folder.
UniqueFd open_folder_nofollow(int parent, const std::string& part, bool create, mode_t mode = 0777);

// What a writer does with a link or a file where a folder must go (or a folder where a
// file must go): fail (ELOOP, ENOTDIR, EISDIR), or remove it, never following it, so the
// tree written matches the names given. Replace only below a folder the writer's own
// identity controls, as the local provider's workspace sync does.
enum class Obstacles { fail, replace };

// Removes `name` in the open folder `parent` and, when it is a folder, everything below
// it, never following a link (a link is removed, not its target); 0 or the errno.
int remove_tree_at(int parent, const std::string& name);

// The folders on the way to names below one open folder, each opened relative to the
// one before without following a link, and kept open for the next name: entries of one
// folder, which come one after another, open no folder twice. For reading as for writing.
class OpenFolders {
 public:
  // Below the open folder `root` (not owned); `create`: make the missing folders with
  // `folder_mode` (less the umask), and with Obstacles::replace put one in place of a
  // link or file on the way.
  OpenFolders(int root, bool create, mode_t folder_mode = 0777, Obstacles obstacles = Obstacles::fail)
      : root_(root), create_(create), folder_mode_(folder_mode), obstacles_(obstacles) {}
  // The open folder holding `name` ("a/b/c": a/b) and its last part ("c"); -1 with errno
  // (ELOOP or ENOTDIR: a folder on the way is a link or not a folder; EINVAL: no name).
  int parent_of(const std::string& name, std::string& last);

 private:
  int root_;
  bool create_;
  mode_t folder_mode_;
  Obstacles obstacles_;
  std::vector<std::string> open_parts_;
  std::vector<UniqueFd> open_fds_;
};

class FolderWriter {
 public:
  // Writes below the open folder `root` (not owned), creating the folders names need
  // with `folder_mode` (less the umask); `obstacles` as above.
  explicit FolderWriter(int root, mode_t folder_mode = 0777, Obstacles obstacles = Obstacles::fail)
      : folders_(root, true, folder_mode, obstacles), obstacles_(obstacles) {}

  // Each returns 0 or the errno of the failure; ELOOP or ENOTDIR mean a folder on the
  // way is a link or not a folder. `name` is clean and relative ("a/b/c").
  // A folder at `name` (one already there is fine; a file or link there is replaced).
  int make_folder(const std::string& name, mode_t mode);
  // A new file at `name`, replacing a file or link there, open for writing in `fd`.
  int create_file(const std::string& name, mode_t mode, UniqueFd& fd);
  // A second name for the file `target`, replacing a file or link at `name`; never a
  // second name for a link.
  int hard_link(const std::string& name, const std::string& target);
  // A symbolic link at `name` holding `target`, replacing a file or link there.
  int symlink(const std::string& name, const std::string& target);
  // Removes the file or link at `name`, if any (a half-written file).
  void remove(const std::string& name);
  // True when `name` already is a regular file with these permission bits, size and
  // modification time, last changed before `changed_before` (its ctime, which no one can
  // set back as a modification time can be): by which a copy is taken to be the same.
  bool holds_file(const std::string& name, mode_t mode, std::uint64_t size, const timespec& mtime,
                  const timespec& changed_before);
  // True when `name` already is a symbolic link holding `target`.
  bool holds_link(const std::string& name, const std::string& target);

 private:
  // The open folder holding `name` (created as needed) and its last part; -1 with errno.
  int parent_of(const std::string& name, std::string& last) { return folders_.parent_of(name, last); }
  // Removes a file or link at `last` in `parent` so something new can take its place
  // (a folder too with Obstacles::replace; EISDIR otherwise).
  int clear(int parent, const std::string& last) const;

  OpenFolders folders_;
  Obstacles obstacles_;
};

}  // namespace corral::os
