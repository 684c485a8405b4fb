// A git checkout as the scan sees it: where its top level is, and which files git lists
// in it. Finding the top level usually needs no git process (plain_toplevel); git is
// asked whenever its answer could differ from a plain look for `.git`.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/environment.hpp"

namespace corral {

// The top level of the checkout holding `start` (absolute, symlinks resolved) found
// without running git, or nullopt when that could disagree with `git rev-parse
// --show-toplevel` and git must be asked: a variable of `env` that moves the repository
// (GIT_DIR, GIT_WORK_TREE, GIT_CEILING_DIRECTORIES, ...), a `.git` that is a file
// (worktrees, submodules) or a link, a repository config that moves the work tree or
// includes others, a folder or `.git` not owned by this user (git's safe.directory
// check), a bare repository, a file-system boundary, or no `.git` up to `/`.
std::optional<std::filesystem::path> plain_toplevel(const std::filesystem::path& start,
                                                    const EnvLookup& env = process_env);

// The top level of the checkout holding `start` (absolute, symlinks resolved), or empty
// when it is in none or git is absent: plain_toplevel's answer, else git's.
std::filesystem::path git_toplevel(const std::filesystem::path& start, const std::function<bool()>& cancelled = {});

// What `git ls-files` says of a checkout: its tracked and untracked, not-ignored files
// (sorted, each once) and the folders it could not open (relative to the top level).
struct GitListing {
  std::vector<std::string> files;
  std::vector<std::string> unopened;
};

// Lists the checkout at `root` (its top level). Throws corral::Error when git fails, and
// cancelled (stopping git) once `cancelled` says so.
GitListing list_git_files(const std::filesystem::path& root, const std::function<bool()>& cancelled);

}  // namespace corral
