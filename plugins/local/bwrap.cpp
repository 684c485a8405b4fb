#include "bwrap.hpp"

#include "corral/sdk/process.hpp"

#include <filesystem>

namespace fs = std::filesystem;

namespace corral::local {
namespace {

// The read-only system layer: /usr and the merged-/usr compatibility links or folders.
void add_system_dirs(std::vector<std::string>& argv) {
  argv.insert(argv.end(), {"--ro-bind", "/usr", "/usr"});
  for (const char* dir : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}) {
    std::error_code ec;
    auto status = fs::symlink_status(dir, ec);
    if (ec || !fs::exists(status)) continue;
    if (fs::is_symlink(status)) {
      argv.insert(argv.end(), {"--symlink", fs::read_symlink(dir, ec).string(), dir});
    } else {
      argv.insert(argv.end(), {"--ro-bind", dir, dir});
    }
  }
}

// Namespaces and privileges every jail drops. Always a user namespace: as root, one
// whose only mapping is an unprivileged host user (else bwrap makes none and the command
// is the host's root), made so that no namespace can be nested in it; otherwise bwrap's
// own, asked for explicitly so a setuid bwrap makes one too, with --disable-userns. A
// nested user namespace would give the command capabilities over its own mounts: one
// more kernel surface, and a way to remount what the jail made read-only in its view.
// --cap-drop ALL drops what the namespace grants; --new-session keeps the command from
// typing into the user's terminal.
std::vector<std::string> base_argv(const JailSpec& jail) {
  std::vector<std::string> argv = {jail.bwrap, "--die-with-parent", "--new-session"};
  if (jail.join_userns) {
    argv.insert(argv.end(), {"--userns", std::to_string(kJailUsernsFd), "--uid", std::to_string(jail.user.uid),
                             "--gid", std::to_string(jail.user.gid)});
  } else {
    argv.insert(argv.end(), {"--unshare-user", "--disable-userns"});
  }
  if (jail.report_status) argv.insert(argv.end(), {"--json-status-fd", std::to_string(kJailStatusFd)});
  argv.insert(argv.end(), {"--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts"});
  return argv;
}

}  // namespace

std::vector<std::string> jail_argv(const JailSpec& jail, const Command& command) {
  std::vector<std::string> argv = base_argv(jail);
  if (!jail.network) argv.push_back("--unshare-net");
  add_system_dirs(argv);
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run"});
  if (!jail.workspace_dir.empty()) {
    argv.insert(argv.end(), {"--bind", jail.workspace_dir, jail.workdir});
    argv.insert(argv.end(), {"--chdir", join_workspace_path(jail.workdir, command.cwd)});
  }
  if (!jail.hostname.empty()) argv.insert(argv.end(), {"--hostname", jail.hostname});
  argv.insert(argv.end(), {"--", "/proc/self/fd/" + std::to_string(kJailExecFd)});
  if (!command.argv.empty()) {
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  } else {
    argv.insert(argv.end(), {"/bin/sh", "-c", command.shell});
  }
  return argv;
}

std::vector<std::string> jail_env(const Command& command) { return sdk::command_environment(command.env); }

}  // namespace corral::local
