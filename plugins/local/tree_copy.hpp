// Copying a sandbox's workspace into a fork: the tree below one open folder into another,
// never following a link (a jailed command may have planted any), sharing the data blocks
// where the file system can (reflinks), keeping modes and modification times so a build
// in the fork sees its outputs as up to date.
#pragma once

#include <optional>

#include "jail_user.hpp"

namespace corral::local {

// Copies everything below the folder open at `from` into the empty folder open at `to`:
// folders, regular files and symbolic links (as links); other kinds (FIFOs, sockets,
// devices) are skipped. With `owner`, everything copied is given to it (the caller is
// root). Throws Error (quota for a full disk) naming the entry.
void copy_tree(int from, int to, const std::optional<JailUser>& owner = std::nullopt);

}  // namespace corral::local
