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

std::vector<std::string> jail_argv(const JailSpec& jail, const Command& command) {
  std::vector<std::string> argv = {jail.bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"};
  if (!jail.network) argv.push_back("--unshare-net");
  add_system_dirs(argv);
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run"});
  argv.insert(argv.end(), {"--bind", jail.workspace_dir, jail.workdir});
  std::string cwd = command.cwd.empty() ? jail.workdir : jail.workdir + "/" + command.cwd;
  argv.insert(argv.end(), {"--chdir", cwd});
  if (!jail.hostname.empty()) argv.insert(argv.end(), {"--hostname", jail.hostname});
  argv.push_back("--clearenv");
  const std::pair<const char*, const char*> defaults[] = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"HOME", "/tmp"},
      {"LANG", "C.UTF-8"},
      {"CORRAL_SANDBOX", "1"},
  };
  for (const auto& [name, value] : defaults)
    if (!command.env.count(name)) argv.insert(argv.end(), {"--setenv", name, value});
  for (const auto& [name, value] : command.env) argv.insert(argv.end(), {"--setenv", name, value});
  argv.push_back("--");
  if (!command.argv.empty()) {
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  } else {
    argv.insert(argv.end(), {"/bin/sh", "-c", command.shell});
  }
  return argv;
}

std::vector<std::string> probe_argv(const std::string& bwrap) {
  std::vector<std::string> argv = {bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"};
  add_system_dirs(argv);
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--", "true"});
  return argv;
}

}  // namespace corral::local
