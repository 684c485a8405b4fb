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

}  // namespace corral::local
