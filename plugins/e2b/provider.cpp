#include "provider.hpp"

#include <chrono>
#include <vector>

#include "corral/sdk/download.hpp"
#include "corral/sdk/remote/doctor.hpp"
#include "corral/sdk/remote/errors.hpp"
#include "corral/sdk/remote/ownership.hpp"
#include "corral/sdk/remote/step_failure.hpp"
#include "corral/sdk/remote/strays.hpp"
#include "corral/sdk/remote/text_command.hpp"
#include "corral/sdk/sync.hpp"
#include "download.hpp"
#include "interaction.hpp"
#include "spec.hpp"

namespace corral::e2b {

void check_sandbox_id(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 63;
  for (char c : id) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-');
  if (!ok) throw Error(ErrorCode::invalid_argument, "'" + id + "' is not an E2B sandbox ID");
}

namespace {

// Joins a workspace-relative cwd onto the workdir; refuses absolute or escaping paths.
ProcessRequest process_for(const Command& c, const std::string& workdir) {
  sdk::remote::require_text_command(c, "E2B");
  ProcessRequest p;
  if (!c.argv.empty()) {
    p.cmd = c.argv.front();
    p.args.assign(c.argv.begin() + 1, c.argv.end());
  } else if (!c.shell.empty()) {
    p.cmd = "/bin/sh";
    p.args = {"-c", c.shell};
  } else {
    throw Error(ErrorCode::invalid_argument, "no command to run");
  }
  p.envs = c.env;
  p.cwd = join_workspace_path(workdir, c.cwd);
  return p;
}

// Unpacks the archive over the workdir (files the sandbox made survive a re-sync, as the
// upload contract says). Names come in through the environment so that no path is ever
// spliced into shell text.
constexpr const char* kUnpackScript =
    "set -e\n"
    "trap 'rm -f -- \"$CORRAL_ARCHIVE\"' EXIT\n"
    "mkdir -p -- \"$CORRAL_DIR\"\n"
    "tar -xzf \"$CORRAL_ARCHIVE\" -C \"$CORRAL_DIR\"\n";

// E2B has no stop: an idle policy of "stop" pauses too (the spec offers only "pause").
bool pauses_when_idle(const CreateRequest& request) { return request.idle == "pause" || request.idle == "stop"; }

std::string megabytes(std::uint64_t bytes) {
  return std::to_string((bytes + 512 * 1024) / (1024 * 1024)) + " MB";
}

}  // namespace

E2bProvider::E2bProvider(const sdk::Options& options)
    : settings_(Settings::from(options)), control_(client_, settings_) {}

std::string E2bProvider::domain_of(const Sandbox& sandbox) const {
  auto live = live_.find(sandbox.id);
  if (live != live_.end() && !live->second.domain.empty()) return live->second.domain;
  auto it = sandbox.details.find("domain");
  return it != sandbox.details.end() && !it->second.empty() ? it->second : settings_.domain;
}

Sandbox E2bProvider::to_sandbox(const SandboxInfo& info) const {
  Sandbox s;
  s.id = info.id;
  s.state = info.state.empty() ? "running" : info.state;
  s.labels = info.metadata;
  s.details["template"] = info.alias.empty() ? info.template_id : info.alias;
  if (!info.envd_version.empty()) s.details["envdVersion"] = info.envd_version;
  if (!info.domain.empty()) s.details["domain"] = info.domain;
  if (!info.started_at.empty()) s.details["startedAt"] = info.started_at;
  if (!info.end_at.empty()) s.details["endAt"] = info.end_at;
  s.details["workdir"] = settings_.workdir;
  s.details["user"] = settings_.user;
  if (!info.envd_access_token.empty()) s.secrets["envdAccessToken"] = info.envd_access_token;
  return s;
}

std::vector<DoctorCheck> E2bProvider::doctor(const sdk::Host& host) {
  return sdk::remote::doctor_checks(identity(), settings_.api_key, {"E2B control plane", settings_.api_url}, *this,
                                    host);
}

Sandbox E2bProvider::create(const CreateRequest& request, const sdk::Host& host) {
  const StringMap metadata = sdk::remote::creation_labels(request);
  const bool pause_at_end = pauses_when_idle(request);
  SandboxInfo info = sdk::remote::create_or_sweep(identity(), *this, request, host, [&] {
    return control_.create(metadata, request.network, pause_at_end, host);
  });
  if (info.metadata.empty()) info.metadata = metadata;  // create's answer has no metadata
  Live& live = live_[info.id];
  live.access_token = info.envd_access_token;
  live.domain = info.domain;
  live.connected = true;  // fresh: its lifetime was just set
  Sandbox s = to_sandbox(info);
  // Kept in the claim: a command with secrets sets them beside this same list (set_network).
  s.details["network"] = to_string(request.network);
  return s;
}

void E2bProvider::throw_if_gone(const std::string& id, const sdk::Host& host) {
  try {
    control_.get(id, host);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::not_found) throw;
  }
}

Sandbox E2bProvider::get(const std::string& id, const sdk::Host& host) {
  check_sandbox_id(id);
  SandboxInfo info = control_.get(id, host);
  Live& live = live_[info.id];
  if (!info.envd_access_token.empty()) live.access_token = info.envd_access_token;
  if (!info.domain.empty()) live.domain = info.domain;
  return to_sandbox(info);
}

std::vector<Sandbox> E2bProvider::list(const StringMap& labels, const sdk::Host& host) {
  return sdk::remote::list_owned(
      labels, [&](const StringMap& filter) { return control_.list(filter, host); },
      [this](const SandboxInfo& info) { return to_sandbox(info); });
}

void E2bProvider::destroy(const Sandbox& sandbox, const sdk::Host&) {
  check_sandbox_id(sandbox.id);
  control_.kill(sandbox.id);  // already gone counts as success
  live_.erase(sandbox.id);
}

void E2bProvider::connect(const std::string& id, const sdk::Host& host) {
  SandboxInfo info = control_.connect(id, host);
  Live& live = live_[id];
  if (!info.envd_access_token.empty()) live.access_token = info.envd_access_token;
  if (!info.domain.empty()) live.domain = info.domain;
  live.connected = true;
}

Envd E2bProvider::envd_for(const Sandbox& sandbox, const sdk::Host& host) {
  check_sandbox_id(sandbox.id);
  Live& live = live_[sandbox.id];
  if (live.access_token.empty())
    if (auto it = sandbox.secrets.find("envdAccessToken"); it != sandbox.secrets.end()) live.access_token = it->second;
  if (!live.connected) connect(sandbox.id, host);
  EnvdTarget t;
  t.sandbox_id = sandbox.id;
  t.route_by_headers = !settings_.sandbox_url.empty();
  t.base_url = envd_base_url(settings_.sandbox_url, sandbox.id, domain_of(sandbox));
  t.access_token = live.access_token;
  t.user = settings_.user;
  return Envd(client_, t, settings_.stall_timeout_seconds);
}

NetworkPolicy E2bProvider::secrets_network(const Sandbox& sandbox, const std::vector<Secret>& secrets) const {
  const auto recorded = sandbox.details.find("network");
  const NetworkPolicy network =
      recorded == sandbox.details.end() ? NetworkPolicy{} : parse_network_policy(recorded->second);
  if (network.mode != NetworkPolicy::Mode::allow)
    throw Error(ErrorCode::invalid_argument,
                "E2B sandbox " + sandbox.id + " has no allow list corral knows of, beside which to set secrets" +
                    (recorded == sandbox.details.end() ? " (it was made by an older corral)" : ""),
                "start a new sandbox with --secret and --network allow:...");
  for (const Secret& s : secrets)
    for (const std::string& h : s.hosts)
      if (h.rfind("*.", 0) == 0)
        throw Error(ErrorCode::invalid_argument,
                    "--secret " + s.name + ": E2B sets a secret on requests to named domains, not '" + h + "'",
                    "list each host the secret goes to: --secret " + s.name + "=api.example.com,...");
  return network;
}

ExecResult E2bProvider::exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) {
  if (command.secrets.empty()) return run(sandbox, command, host);
  // E2B's egress proxy sets each secret's header on requests to its hosts while the
  // command runs; the rules go when it ends, whatever its end.
  const NetworkPolicy network = secrets_network(sandbox, command.secrets);
  confirming_gone(sandbox.id, host, [&] { control_.set_network(sandbox.id, network, command.secrets); });
  const auto clear = [&] {
    try {
      control_.set_network(sandbox.id, network, {});
    } catch (const Error& e) {
      if (e.code() != ErrorCode::not_found)
        host.warn("could not take the secrets' rules off E2B sandbox " + sandbox.id + " (" + e.what() +
                  "): its later commands may still have them put in; stop it if that matters");
    }
  };
  try {
    ExecResult result = run(sandbox, command, host);
    clear();
    return result;
  } catch (...) {
    clear();
    throw;
  }
}

ExecResult E2bProvider::run(const Sandbox& sandbox, const Command& command, const sdk::Host& host) {
  ProcessRequest process = process_for(command, settings_.workdir);
  process.timeout_seconds = command.timeout_seconds;
  Envd envd = envd_for(sandbox, host);
  // The user's input, signals and terminal size reach the command while it runs.
  const auto version = sandbox.details.find("envdVersion");
  Interaction interaction(envd, command, host,
                          version == sandbox.details.end() || envd_closes_stdin(version->second));
  process.open_stdin = interaction.open_stdin();
  process.pty = interaction.terminal();
  sdk::CommandDeadline deadline(host, command.timeout_seconds);
  ProcessHooks hooks = sdk::remote::command_hooks(host, deadline);
  // Input that could not reach it stops it: it would otherwise run on an input cut short.
  hooks.stop = [&] { return interaction.input_failed() || deadline.stop(); };
  // Envd warns when it cannot confirm that the command stopped. That is moot when the
  // sandbox itself is gone, so the warnings wait until the outcome is known.
  std::vector<std::string> warnings;
  hooks.warn = [&](const std::string& w) { warnings.push_back(w); };
  const auto pass_warnings_on = [&] {
    for (const std::string& w : warnings) host.warn(w);
  };
  try {
    const int exit_code =
        envd.run(process, hooks, "run the command", [&](std::uint32_t pid) { interaction.tick(pid); });
    interaction.ended();
    pass_warnings_on();
    return ExecResult{exit_code};
  } catch (const Error& e) {
    // A stream that broke may mean E2B deleted the sandbox under it (its lifetime ended):
    // say that, not "the network", when the control plane confirms it.
    if (e.code() == ErrorCode::unavailable) throw_if_gone(sandbox.id, host);
    pass_warnings_on();
    if (std::optional<Error> input = interaction.failure(); input && e.code() == ErrorCode::cancelled) throw *input;
    if (e.code() == ErrorCode::cancelled && deadline.timed_out())
      throw sdk::remote::command_timed_out(identity(), command.timeout_seconds, sandbox.id);
    throw;
  }
}

void E2bProvider::upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host) {
  Envd envd = envd_for(sandbox, host);
  const std::string& workdir = settings_.workdir;
  const size_t slash = workdir.rfind('/');
  const std::string parent = workdir.substr(0, slash);
  const std::string name = workdir.substr(slash + 1);
  const std::string archive = "." + name + ".corral-upload.tar.gz";
  host.progress("uploading the workspace (" + megabytes(request.size) + ") to E2B sandbox " + sandbox.id);
  confirming_gone(sandbox.id, host,
                  [&] { envd.upload(request.archive_path, parent + "/" + archive, [&] { return host.cancelled(); }, host.transfer_reporter()); });

  ProcessRequest unpack{"/bin/sh", {"-c", kUnpackScript}, {{"CORRAL_DIR", name}, {"CORRAL_ARCHIVE", archive}}, parent};
  sdk::remote::StepErrors errors;
  const ProcessHooks hooks = sdk::remote::step_hooks(host, errors.sink());
  int code = confirming_gone(sandbox.id, host, [&] { return envd.run(unpack, hooks, "unpack the workspace into " + workdir); });
  if (code != 0)
    throw sdk::remote::step_failed(identity(), "unpacking the workspace into " + workdir, sandbox.id, code, errors,
                                   "the template needs sh, tar and gzip, and user '" + settings_.user +
                                       "' must be able to write " + parent + "; see " +
                                       identity().settings.flag("workdir") + " and " +
                                       identity().settings.flag("user"));
  // Files deleted locally since the last sync leave the sandbox too.
  for (const std::vector<std::string>& batch : sdk::removal_batches(request.removed)) {
    std::vector<std::string> args = {"-c", sdk::kRemovePathsScript, "sh"};
    args.insert(args.end(), batch.begin(), batch.end());
    ProcessRequest remove{"/bin/sh", std::move(args), {{"CORRAL_DIR", name}}, parent};
    errors.clear();
    int rc = confirming_gone(sandbox.id, host, [&] { return envd.run(remove, hooks, "remove deleted files from " + workdir); });
    if (rc != 0)
      throw sdk::remote::step_failed(identity(), "removing files deleted locally from " + workdir, sandbox.id, rc,
                                     errors);
  }
}

DownloadResult E2bProvider::download(const Sandbox& sandbox, const DownloadRequest& request, const sdk::Host& host) {
  const DownloadPaths paths = download_paths(settings_.workdir, request.cwd, sdk::download_archive_name());
  Envd envd = envd_for(sandbox, host);
  sdk::RemoteArchive remote;
  remote.pack = [&](const std::string& script, const std::function<void(std::string_view)>& on_stderr) {
    host.progress("packing the downloads in E2B sandbox " + sandbox.id);
    const ProcessHooks hooks = sdk::remote::step_hooks(host, on_stderr);
    return confirming_gone(sandbox.id, host, [&] {
      return envd.run({"/bin/sh", {"-c", script}, {}, paths.run_from}, hooks, "pack the downloads");
    });
  };
  remote.fetch = [&](const std::function<void(std::string_view)>& sink) {
    host.progress("downloading the files from E2B sandbox " + sandbox.id);
    confirming_gone(sandbox.id, host, [&] { envd.download(paths.remote, sink, [&] { return host.cancelled(); }, host.transfer_reporter()); });
  };
  remote.remove = [&] {
    // By its name in run_from, as the script wrote it.
    ProcessHooks quiet;
    quiet.on_stdout = [](std::string_view) {};
    quiet.on_stderr = [](std::string_view) {};
    try {
      if (envd.run({"rm", {"-f", "--", paths.archive}, {}, paths.run_from, 30}, quiet, "remove the download archive") != 0)
        throw Error(ErrorCode::unavailable, "rm failed");
    } catch (const Error&) {
      host.warn("could not remove " + paths.remote + " from E2B sandbox " + sandbox.id +
                "; it goes when the sandbox does");
    }
  };
  return sdk::download_through_archive(request, paths.folder, paths.archive, remote);
}

Sandbox E2bProvider::extend(const Sandbox& sandbox, std::int64_t seconds, const sdk::Host& host) {
  check_sandbox_id(sandbox.id);
  if (seconds <= 0 || seconds > 2147483647)
    throw Error(ErrorCode::invalid_argument, "an E2B lifetime extension must be positive");
  control_.set_timeout(sandbox.id, seconds, "--by", host);
  return get(sandbox.id, host);
}

Sandbox E2bProvider::pause(const Sandbox& sandbox, const sdk::Host& host) {
  check_sandbox_id(sandbox.id);
  const bool paused_now = control_.pause(sandbox.id, settings_.pause_memory);
  live_[sandbox.id].connected = false;  // envd is gone until a connect resumes it
  Sandbox now = get(sandbox.id, host);
  if (!paused_now && now.state != "paused")
    throw Error(ErrorCode::unavailable,
                "E2B would not pause sandbox " + sandbox.id + " (HTTP 409: it is busy, e.g. being forked)",
                "retry in a moment");
  return now;
}

Sandbox E2bProvider::resume(const Sandbox& sandbox, const sdk::Host& host) {
  check_sandbox_id(sandbox.id);
  connect(sandbox.id, host);
  return get(sandbox.id, host);
}

std::string E2bProvider::url(const Sandbox& sandbox, int port, const sdk::Host&) {
  check_sandbox_id(sandbox.id);
  if (port < 1 || port > 65535)
    throw Error(ErrorCode::invalid_argument, "port " + std::to_string(port) + " is not between 1 and 65535");
  return "https://" + std::to_string(port) + "-" + sandbox.id + "." + domain_of(sandbox);
}

}  // namespace corral::e2b
