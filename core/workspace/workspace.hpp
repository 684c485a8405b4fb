// The workspace: which files of the user's working tree go into the sandbox, and their
// fingerprint (to skip re-syncing an unchanged tree). archive.hpp packs them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

// Where downloads land by default, below the workspace root, one folder per lease
// (--download); the scan never syncs it back.
inline constexpr std::string_view kDownloadsFolder = ".corral/runs";

struct WorkspaceFile {
  std::string path;  // relative to the root, '/'-separated
  bool symlink = false;
  bool executable = false;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};

struct Workspace {
  std::filesystem::path root;  // the git top level, or the folder itself
  std::string subdir;          // where the user stands, relative to root ("" at the root)
  bool git = false;
  std::vector<WorkspaceFile> files;  // sorted by path
  std::uint64_t total_bytes = 0;
  std::string fingerprint;  // changes when any path, mode, size or mtime changes
};

// The root of the working tree holding `cwd`: its git top level, else `cwd` itself.
std::filesystem::path find_workspace_root(const std::filesystem::path& cwd);

struct PrefetchedListing;

// Starts git's listing of the checkout holding `cwd` on a thread of its own, for the
// scan_workspace(cwd) that follows in this process: a run's listing then overlaps
// loading its provider. Nothing for a folder in no checkout. A scan of another folder
// ignores it; destroyed untaken, it stops git and waits for its thread (under 100 ms).
class WorkspacePrefetch {
 public:
  explicit WorkspacePrefetch(const std::filesystem::path& cwd);
  ~WorkspacePrefetch();
  WorkspacePrefetch(const WorkspacePrefetch&) = delete;
  WorkspacePrefetch& operator=(const WorkspacePrefetch&) = delete;

 private:
  std::shared_ptr<PrefetchedListing> state_;
};

// Scans the working tree containing `cwd`: in a git checkout its tracked and untracked,
// not-ignored files; elsewhere every file below `cwd`; minus .corralignore matches and
// .git, unless `with_git` (--git), which adds every file of the checkout's own .git folder
// (for tools that read it: git describe, setuptools-scm). A folder it cannot enter is
// left out and `warn` told which. Throws corral::Error when the tree cannot be read,
// invalid-argument for a malformed .corralignore (or one that is not a regular file of at
// most 8 MiB) and for `with_git` where there is no .git folder to send (no checkout, or a
// worktree's or submodule's .git file), and cancelled (stopping git too) once `cancelled`
// says so.
Workspace scan_workspace(const std::filesystem::path& cwd, const std::function<bool()>& cancelled = {},
                         const std::function<void(const std::string&)>& warn = {}, bool with_git = false);

// Throws invalid-argument when the workspace is larger than `limit` bytes (0 = no limit).
void check_workspace_size(const Workspace& workspace, std::uint64_t limit);

// CreateRequest::workspace_bytes for `workspace` under --max-workspace `limit` (0 = none):
// the limit plus a block a file, as tmpfs and most disks round each file up to one.
std::uint64_t workspace_bytes_bound(const Workspace& workspace, std::uint64_t limit);

}  // namespace corral
