// corral-jail-exec (jail_exec.c), the program bwrap starts in every jail: installed
// beside the plugin host, in <prefix>/libexec/corral, and found relative to this plugin.
#pragma once

#include <filesystem>
#include <optional>

#include "corral/sdk/folder_writer.hpp"
#include "jail_user.hpp"

namespace corral::local {

// Where corral-jail-exec is: the path relative to this plugin's own file that the build
// and every install share.
std::filesystem::path jail_exec_path();

// corral-jail-exec, open for reading (close-on-exec), to be passed to bwrap, which runs
// it by descriptor: no path of the host need be visible in the jail, and a file swapped
// in after the check is never what runs. Throws unavailable when it is missing or the
// identity bwrap runs as (`as_user` when given, else this process's) may not execute it.
sdk::UniqueFd open_jail_exec(const std::optional<JailUser>& as_user);

}  // namespace corral::local
