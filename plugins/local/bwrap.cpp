#include "bwrap.hpp"

#include "corral/os/process.hpp"

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

// The folders the jail makes itself or binds from the host (add_system_dirs and
// jail_argv), and the host's own that no workspace should stand in for: a workspace
// bound at /proc would replace the /proc/self/fd/N the jail starter is run from, one at
// /usr every program of the jail.
constexpr std::string_view kSystemFolders[] = {"/usr", "/bin",  "/sbin", "/lib",  "/lib32", "/lib64",
                                               "/libx32", "/etc", "/opt", "/proc", "/dev",   "/tmp",
                                               "/run", "/sys",  "/boot", "/var"};

// True when `path` is `folder` or below it.
bool at_or_below(std::string_view path, std::string_view folder) {
  return path.starts_with(folder) && (path.size() == folder.size() || path[folder.size()] == '/');
}

}  // namespace

std::string workdir_problem(const std::string& workdir) {
  if (workdir.empty() || workdir[0] != '/') return "it must be an absolute path";
  if (workdir == "/") return "it must be a folder below /, not / itself";
  if (workdir.find('\0') != std::string::npos) return "it holds a NUL byte";
  for (size_t start = 1; start <= workdir.size();) {
    const size_t end = std::min(workdir.find('/', start), workdir.size());
    const std::string_view part = std::string_view(workdir).substr(start, end - start);
    if (part.empty() || part == "." || part == "..")
      return "it must be a clean path, without empty, '.' or '..' parts";
    start = end + 1;
  }
  for (std::string_view folder : kSystemFolders)
    if (at_or_below(workdir, folder))
      return "it is " + std::string(workdir == folder ? "" : "below ") + std::string(folder) +
             ", which the jail is built of: the workspace there would hide it";
  return "";
}

std::vector<std::string> jail_argv(const JailSpec& jail, const Command& command) {
  std::vector<std::string> argv = base_argv(jail);
  if (!jail.network) argv.push_back("--unshare-net");
  add_system_dirs(argv);
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/run"});
  if (jail.tmp_dir.empty())
    argv.insert(argv.end(), {"--tmpfs", "/tmp"});
  else
    argv.insert(argv.end(), {"--bind", jail.tmp_dir, "/tmp"});
  if (jail.ca_bundle)
    argv.insert(argv.end(), {"--perms", "0444", "--ro-bind-data", std::to_string(kJailCaFd), kJailCaBundle});
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

std::vector<std::string> jail_env(const Command& command) { return os::command_environment(command.env); }

}  // namespace corral::local
