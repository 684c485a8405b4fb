// Helpers for the upload primitive's second half: removing the paths a re-sync reports
// as deleted locally (UploadRequest::removed), on this machine or in a remote sandbox.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace corral::sdk {

// Removes each of `removed` (relative, '/'-separated) below `root` on this machine,
// never following a symlink on the way (a link the sandbox made cannot redirect the
// removal outside `root`), then the folders the removals left empty. Paths that are
// absent are skipped; an absolute path or one with ".." throws invalid-argument.
void remove_paths_under(const std::filesystem::path& root, const std::vector<std::string>& removed);

// A /bin/sh script for remote sandboxes: with the workspace folder in $CORRAL_DIR and
// the paths as its arguments ("$@"), removes each path and the folders left empty.
// Paths travel as arguments, never spliced into the script's text.
extern const char* const kRemovePathsScript;

// `removed` split into batches whose arguments stay well below the kernel's argv limit.
std::vector<std::vector<std::string>> removal_batches(const std::vector<std::string>& removed,
                                                      size_t max_bytes = 64 * 1024);

}  // namespace corral::sdk
