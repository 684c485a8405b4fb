#include "bwrap.hpp"

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

}  // namespace

// Namespaces and privileges every jail drops. --cap-drop ALL matters when corral runs
// as root (CI containers), where bwrap makes no user namespace and would keep every
// capability; --new-session keeps the command from typing into the user's terminal.
std::vector<std::string> base_argv(const std::string& bwrap) {
  return {bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc",
          "--unshare-uts"};
}

std::vector<std::string> jail_argv(const JailSpec& jail, const Command& command) {
  std::vector<std::string> argv = base_argv(jail.bwrap);
  if (!jail.network) argv.push_back("--unshare-net");
  add_system_dirs(argv);
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run"});
  argv.insert(argv.end(), {"--bind", jail.workspace_dir, jail.workdir});
  std::string cwd = join_workspace_path(jail.workdir, command.cwd);
  argv.insert(argv.end(), {"--chdir", cwd});
  if (!jail.hostname.empty()) argv.insert(argv.end(), {"--hostname", jail.hostname});
  argv.push_back("--");
  if (!command.argv.empty()) {
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  } else {
    argv.insert(argv.end(), {"/bin/sh", "-c", command.shell});
  }
  return argv;
}

std::vector<std::string> jail_env(const Command& command) {
  StringMap env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"HOME", "/tmp"},
      {"LANG", "C.UTF-8"},
      {"CORRAL_SANDBOX", "1"},
  };
  for (const auto& [name, value] : command.env) env[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<std::string> probe_argv(const std::string& bwrap) {
  std::vector<std::string> argv = base_argv(bwrap);
  add_system_dirs(argv);
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--", "true"});
  return argv;
}

}  // namespace corral::local
