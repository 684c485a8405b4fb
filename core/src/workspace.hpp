// The workspace: which files of the user's working tree go into the sandbox, their
// fingerprint (to skip re-syncing an unchanged tree) and the archive that carries them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace corral {

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

// Scans the working tree containing `cwd`: in a git checkout its tracked and untracked,
// not-ignored files; elsewhere every file below `cwd`; minus .corralignore matches and
// .git. A folder it cannot enter is left out and `warn` told which. Throws corral::Error
// when the tree cannot be read, invalid-argument for a malformed .corralignore (or one
// that is not a regular file of at most 8 MiB), and cancelled (stopping git too) once
// `cancelled` says so.
Workspace scan_workspace(const std::filesystem::path& cwd, const std::function<bool()>& cancelled = {},
                         const std::function<void(const std::string&)>& warn = {});

// Throws invalid-argument when the workspace is larger than `limit` bytes (0 = no limit).
void check_workspace_size(const Workspace& workspace, std::uint64_t limit);

// Writes the workspace's files as a gzip-compressed tar to `archive` (gzip's fastest
// level; a workspace of a few MiB or more is compressed on several threads as a series of
// gzip members, which gzip -d, tar -xzf and libarchive read as one stream); returns its size.
// Throws cancelled once `cancelled` says so (polled every few hundred files or MiB),
// removing the partial archive.
std::uint64_t write_archive(const Workspace& workspace, const std::filesystem::path& archive,
                            const std::function<bool()>& cancelled = {});

// Parses "512M", "2G", "100k" or plain bytes; throws invalid-argument, also for a size
// beyond 2^64-1 bytes rather than letting it wrap (to 0, "no limit").
std::uint64_t parse_size(const std::string& text);
// "1.5 MB" style text for messages.
std::string format_size(std::uint64_t bytes);

}  // namespace corral
