// corral-jail-exec (jail_exec.c), the program bwrap starts in every jail: installed
// beside the plugin host, in <prefix>/libexec/corral, and found relative to this plugin.
// It decides what every local command runs, so it is held to the rule a plugin is held
// to (owned by root or the user, writable by nobody else, down every folder on the way)
// and asked to prove it is the whole starter of this corral before a jail runs it.
#pragma once

#include <filesystem>
#include <optional>

#include "corral/os/folder_writer.hpp"
#include "jail_user.hpp"

namespace corral::local {

// Where corral-jail-exec is: the path relative to this plugin's own file that the build
// and every install share.
std::filesystem::path jail_exec_path();
// Where libcorral-egress-tls.so (egress_interceptor.hpp) is: beside corral-jail-exec.
std::filesystem::path egress_tls_module_path();

// corral-jail-exec, open for reading (close-on-exec), to be passed to bwrap, which runs
// it by descriptor: no path of the host need be visible in the jail, and a file swapped
// in after the check is never what runs. The file must be trusted (sdk::trusted_path),
// executable by the identity bwrap runs as (`as_user` when given, else this process's)
// and answer its version probe with this plugin's protocol: an empty, truncated or
// foreign file is refused. The probe runs once per version of the file: `verified` (a
// file of the caller's private folder) remembers the file it passed for, and a file
// changed in any way since is probed again. Throws unavailable, with "reinstall corral".
os::UniqueFd open_jail_exec(const std::optional<JailUser>& as_user, const std::filesystem::path& verified);

// What corral-jail-exec prints, and nothing else, when started with no arguments: its
// name and the protocol it speaks with this plugin.
const char* jail_exec_probe_answer();

}  // namespace corral::local
