// A local sandbox's upload (tree-sync): the user's working tree copied file by file into
// the sandbox's workspace. Corral and the sandbox share this machine, so nothing is
// packed, written to a temporary archive and unpacked again.
#pragma once

#include <time.h>

#include <filesystem>
#include <optional>

#include "corral/sdk.hpp"
#include "jail_user.hpp"

namespace corral::local {

// Copies the files `request` lists from its tree_root into the folder `workspace`,
// replacing files and links there and keeping what the sandbox made, with the modes the
// list gives and each file's modification time. Given `copied_at` (when the last copy into
// `workspace` ended, by the coarse clock files are stamped with), a file there with the same
// mode, size and time that has not changed since, or a link with the same target, is taken
// to be the same and left as it is; without it, every file is copied. Reads as the caller, writes as `owner`
// (the caller without one), and follows no link on either side: a link in the tree is
// copied as a link, one on the way to a listed file fails the copy. Reports bytes to
// `host` and stops once it is cancelled. Throws invalid-argument for a listed path that
// leaves the tree or a file that changed kind or went while being copied (before
// anything is written for a bad path), quota for a full disk or tmpfs.
void copy_workspace(const UploadRequest& request, const std::filesystem::path& workspace,
                    const std::optional<JailUser>& owner, const sdk::Host& host,
                    const std::optional<timespec>& copied_at = std::nullopt);
// Now by the clock the kernel stamps files' changes with: a copy_workspace's `copied_at`.
timespec file_clock_now();

}  // namespace corral::local
