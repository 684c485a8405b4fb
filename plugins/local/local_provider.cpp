// The local provider: sandboxes on this machine, each a folder whose workspace is bound
// into a bubblewrap jail for every command. The default provider: no account needed.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "bwrap.hpp"
#include "corral/sdk.hpp"
#include "corral/sdk/process.hpp"
#include "sandbox_store.hpp"

namespace fs = std::filesystem;

namespace corral::local {
namespace {

constexpr const char* kSpec = R"json({
  "name": "local",
  "aliases": ["bwrap", "bubblewrap"],
  "family": "local",
  "kind": "delegated-run",
  "targets": ["linux"],
  "features": ["run-session", "archive-sync", "url-bridge", "cleanup"],
  "options": [
    {"name": "network", "type": "string", "default": "shared", "choices": ["shared", "none"],
     "env": ["CORRAL_LOCAL_NETWORK"],
     "help": "shared: the command uses this machine's network; none: only a private loopback"},
    {"name": "bwrap", "type": "string", "default": "bwrap", "env": ["CORRAL_BWRAP"], "trusted": true,
     "help": "the bubblewrap executable"},
    {"name": "dir", "type": "string", "env": ["CORRAL_LOCAL_DIR"], "trusted": true,
     "help": "where sandbox folders live (default: $XDG_STATE_HOME/corral/local)"},
    {"name": "workdir", "type": "string", "default": "/workspace", "env": ["CORRAL_LOCAL_WORKDIR"],
     "help": "the workspace's path inside the sandbox"}
  ],
  "docs": {
    "category": "local sandbox (bubblewrap)",
    "location": "local",
    "gpu": "no",
    "cleanupOwner": "corral: a sandbox is a folder, removed at the end of the run or by `corral stop`",
    "bestFit": "fast, free test runs on a Linux machine or CI runner; the default",
    "caveat": "shares the host kernel and, unless network is none, its network; Linux with user namespaces only"
  }
})json";

std::string default_dir() {
  const char* state = std::getenv("XDG_STATE_HOME");
  fs::path base = state && *state == '/' ? fs::path(state) : fs::path(std::getenv("HOME") ? std::getenv("HOME") : "/") / ".local/state";
  return (base / "corral" / "local").string();
}

// Why bwrap failed to start a jail, as a hint the user can act on.
std::string namespace_hint(const std::string& stderr_text) {
  if (stderr_text.find("ermission") != std::string::npos || stderr_text.find("namespace") != std::string::npos)
    return "unprivileged user namespaces look disabled: enable them with `sysctl -w kernel.unprivileged_userns_clone=1` "
           "(Debian) or `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 24.04+), or pick another "
           "provider with --provider";
  return "run `corral doctor --provider local` for details";
}

class LocalProvider : public sdk::Provider {
 public:
  explicit LocalProvider(const sdk::Options& options)
      : store_(options.get("dir").empty() ? default_dir() : options.get("dir")),
        bwrap_(options.get("bwrap", "bwrap")),
        network_(options.get("network", "shared") != "none"),
        workdir_(options.get("workdir", "/workspace")) {
    if (workdir_.empty() || workdir_[0] != '/' || workdir_ == "/" || workdir_.find("..") != std::string::npos)
      throw Error(ErrorCode::invalid_argument, "local workdir '" + workdir_ + "' must be an absolute path below /",
                  "for example --local-workdir /workspace");
  }

  std::vector<DoctorCheck> doctor(const sdk::Host&) override {
    std::vector<DoctorCheck> checks;
    std::string path = sdk::find_program(bwrap_);
    checks.push_back({"bubblewrap installed", !path.empty(), path.empty() ? "'" + bwrap_ + "' not found on PATH" : path,
                      path.empty() ? "install it: sudo apt-get install -y bubblewrap (or set CORRAL_BWRAP)" : ""});
    if (!path.empty()) {
      sdk::CapturedProcess probe = sdk::capture_process({probe_argv(path)}, 30);
      bool ok = probe.exit_code == 0;
      checks.push_back({"user namespaces usable", ok, ok ? "bwrap can create a jail" : trim(probe.err),
                        ok ? "" : namespace_hint(probe.err)});
    }
    std::error_code ec;
    fs::create_directories(store_.root(), ec);
    bool writable = !ec && ::access(store_.root().c_str(), W_OK) == 0;
    checks.push_back({"sandbox folder writable", writable, store_.root().string(),
                      writable ? "" : "set CORRAL_LOCAL_DIR to a writable folder"});
    return checks;
  }

  Sandbox create(const CreateRequest& request, const sdk::Host&) override {
    ensure_jail_works();
    LocalSandbox s = store_.create(request.slug, request.labels);
    return to_sandbox(s);
  }

  Sandbox get(const std::string& id, const sdk::Host&) override {
    auto s = store_.find(id);
    if (!s) throw Error(ErrorCode::not_found, "local sandbox " + id + " does not exist");
    return to_sandbox(*s);
  }

  std::vector<Sandbox> list(const StringMap& labels, const sdk::Host&) override {
    std::vector<Sandbox> out;
    for (const LocalSandbox& s : store_.all()) {
      bool match = true;
      for (const auto& [k, v] : labels) {
        auto it = s.labels.find(k);
        match = match && it != s.labels.end() && it->second == v;
      }
      if (match) out.push_back(to_sandbox(s));
    }
    return out;
  }

  void destroy(const Sandbox& sandbox, const sdk::Host&) override { store_.remove(sandbox.id); }

  void upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host&) override {
    if (!store_.find(sandbox.id)) throw Error(ErrorCode::not_found, "local sandbox " + sandbox.id + " does not exist");
    store_.unpack(sandbox.id, request.archive_path);
  }

  ExecResult exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) override {
    auto s = store_.find(sandbox.id);
    if (!s) throw Error(ErrorCode::not_found, "local sandbox " + sandbox.id + " does not exist");
    JailSpec jail;
    jail.bwrap = bwrap_;
    jail.workspace_dir = store_.workspace_of(sandbox.id).string();
    jail.workdir = workdir_;
    jail.hostname = "corral-" + s->slug;
    jail.network = network_;
    if (!command.cwd.empty() && !fs::is_directory(store_.workspace_of(sandbox.id) / command.cwd))
      throw Error(ErrorCode::invalid_argument, "the folder '" + command.cwd + "' is not in the synced workspace",
                  "run corral from a folder that holds at least one file corral syncs");
    sdk::ProcessSpec spec;
    spec.argv = jail_argv(jail, command);
    spec.env = jail_env(command);
    sdk::ProcessOutcome outcome = sdk::run_process(
        spec, [&](std::string_view d) { host.emit(CORRAL_STDOUT, d); },
        [&](std::string_view d) { host.emit(CORRAL_STDERR, d); }, [&] { return host.cancelled(); },
        command.timeout_seconds);
    if (outcome.cancelled) throw Error(ErrorCode::cancelled, "the command was stopped");
    if (outcome.timed_out)
      throw Error(ErrorCode::timeout,
                  "the command ran longer than " + format_duration(command.timeout_seconds) + " and was stopped",
                  "raise --timeout if it needs longer");
    return {outcome.exit_code};
  }

  std::string url(const Sandbox& sandbox, int port, const sdk::Host&) override {
    if (!store_.find(sandbox.id)) throw Error(ErrorCode::not_found, "local sandbox " + sandbox.id + " does not exist");
    if (!network_)
      throw Error(ErrorCode::unsupported, "this local sandbox has no network to reach (network = none)",
                  "use --local-network shared to reach its ports");
    return "http://127.0.0.1:" + std::to_string(port);
  }

 private:
  static std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  // Fails with guidance when bwrap is missing or cannot make a jail here, before a
  // sandbox exists, so a command's own failure is never mistaken for it.
  void ensure_jail_works() {
    if (jail_checked_) return;
    std::string path = sdk::find_program(bwrap_);
    if (path.empty())
      throw Error(ErrorCode::unavailable, "bubblewrap ('" + bwrap_ + "') is not installed",
                  "install it with `sudo apt-get install -y bubblewrap`, or set CORRAL_BWRAP to its path");
    sdk::CapturedProcess probe = sdk::capture_process({probe_argv(path)}, 30);
    if (probe.exit_code != 0)
      throw Error(ErrorCode::unavailable, "bubblewrap cannot create a sandbox here: " + trim(probe.err),
                  namespace_hint(probe.err));
    jail_checked_ = true;
  }

  Sandbox to_sandbox(const LocalSandbox& s) const {
    Sandbox out;
    out.id = s.id;
    out.state = "ready";
    out.labels = s.labels;
    out.details = {{"path", store_.dir_of(s.id).string()},
                   {"workdir", workdir_},
                   {"network", network_ ? "shared" : "none"},
                   {"createdAt", s.created_at}};
    return out;
  }

  SandboxStore store_;
  std::string bwrap_;
  bool network_;
  std::string workdir_;
  bool jail_checked_ = false;
};

}  // namespace
}  // namespace corral::local

CORRAL_PLUGIN(corral::local::LocalProvider, "0.1.0", corral::local::kSpec)
