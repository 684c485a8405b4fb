// Where a download's pieces live in an E2B sandbox. The packing script runs from /tmp and
// reaches the command's folder and its archive by paths relative to it, so the same
// request works in E2B and in the stand-in, whose sandboxes are folders on the test machine.
#pragma once

#include <string>

namespace corral::e2b {

struct DownloadPaths {
  std::string run_from;  // absolute sandbox folder the script runs in (/tmp)
  std::string folder;    // the command's folder, relative to run_from
  std::string archive;   // the archive's name in run_from
  std::string remote;    // the archive's absolute sandbox path, for envd's file API
};

// The paths for a download from `cwd` (workspace-relative) under the absolute `workdir`,
// the archive named `archive_name` in /tmp. Throws invalid-argument for a cwd that leaves
// the workspace.
DownloadPaths download_paths(const std::string& workdir, const std::string& cwd, const std::string& archive_name);

}  // namespace corral::e2b
