#include "provider.hpp"

#include <chrono>

#include "command_line.hpp"
#include "corral/sdk/remote/doctor.hpp"
#include "corral/sdk/remote/errors.hpp"
#include "corral/sdk/remote/ownership.hpp"
#include "corral/sdk/remote/process_group.hpp"
#include "corral/os/random.hpp"
#include "corral/sdk/remote/step_failure.hpp"
#include "corral/sdk/remote/strays.hpp"
#include "corral/sdk/remote/text_command.hpp"
#include "corral/os/temp_file.hpp"
#include "errors.hpp"
#include "session_run.hpp"
#include "spec.hpp"

namespace corral::daytona {
namespace {

// Unpacks the archive ($2) into the workdir ($1) over what is there: files the sandbox
// made survive a re-sync. Then removes the paths listed in file $3 (one per line, relative
// to the workdir): files deleted locally since the last sync. Paths arrive as arguments
// or file lines, never spliced into the script.
constexpr const char* kUnpackScript =
    "set -e\n"
    "trap 'rm -f -- \"$2\" ${3:+\"$3\"}' EXIT\n"
    "mkdir -p -- \"$1\"\n"
    "tar -xzf \"$2\" -C \"$1\"\n"
    "if [ -n \"$3\" ]; then while IFS= read -r p; do rm -rf -- \"$1/$p\"; done < \"$3\"; fi\n";

// The removed paths as lines of a file; a path with a newline cannot be a line and is
// left to `separately`. Every path is checked to stay inside the workdir.
std::string removal_list(const std::vector<std::string>& removed, const std::string& workdir,
                         std::vector<std::string>& separately) {
  std::string lines;
  for (const std::string& path : removed) {
    const std::string full = join_workspace_path(workdir, path);  // refuses absolute and ".." paths
    if (full == workdir) continue;                                // never the workdir itself
    if (path.find('\n') != std::string::npos) separately.push_back(full);
    else lines += path + "\n";
  }
  return lines;
}

std::string megabytes(std::uint64_t bytes) { return std::to_string((bytes + 512 * 1024) / (1024 * 1024)) + " MB"; }

// corral's word for Daytona's state: a started sandbox is running; one that costs no
// compute and keeps its files (paused, or stopped or archived after a stop-based pause or
// auto-stop) is paused; any other keeps Daytona's word.
std::string corral_state(const std::string& state) {
  if (state.empty()) return "unknown";
  if (state == "started") return "running";
  if (at_rest(state)) return "paused";
  return state;
}

}  // namespace

DaytonaProvider::DaytonaProvider(const sdk::Options& options)
    : settings_(Settings::from(options)), api_(client_, settings_), control_(api_, settings_) {}

Sandbox DaytonaProvider::to_sandbox(const SandboxInfo& info) const {
  Sandbox s;
  s.id = info.id;
  s.state = corral_state(info.state);
  if (s.state != info.state && !info.state.empty()) s.details["provider-state"] = info.state;
  if (!info.sandbox_class.empty()) s.details["sandboxClass"] = info.sandbox_class;
  if (info.auto_pause_minutes > 0) s.details["autoPauseMinutes"] = std::to_string(info.auto_pause_minutes);
  s.labels = info.labels;
  if (!info.snapshot.empty()) s.details["snapshot"] = info.snapshot;
  if (!info.target.empty()) s.details["target"] = info.target;
  if (!info.user.empty()) s.details["user"] = info.user;
  if (!info.created_at.empty()) s.details["createdAt"] = info.created_at;
  if (info.auto_stop_minutes >= 0) s.details["autoStopMinutes"] = std::to_string(info.auto_stop_minutes);
  if (!info.error_reason.empty()) s.details["errorReason"] = info.error_reason;
  s.details["workdir"] = settings_.workdir;
  return s;
}

std::vector<DoctorCheck> DaytonaProvider::doctor(const sdk::Host& host) {
  return sdk::remote::doctor_checks(identity(), settings_.api_key, {"Daytona API", settings_.api_url}, *this, host);
}

Sandbox DaytonaProvider::create(const CreateRequest& request, const sdk::Host& host) {
  if (!request.idle.empty() && settings_.auto_stop_minutes == 0)
    throw Error(ErrorCode::invalid_argument,
                "--idle " + request.idle + " needs Daytona's auto-stop interval, but " +
                    identity().settings.flag("auto-stop") + " is 0 (never)",
                "set " + identity().settings.flag("auto-stop") + " to the minutes without activity after which to " +
                    request.idle + " the sandbox");
  const StringMap labels = sdk::remote::creation_labels(request);
  SandboxInfo info = sdk::remote::create_or_sweep(identity(), *this, request, host, [&] {
    host.progress("creating a Daytona sandbox");
    return control_.create(labels, request.network);
  });
  // Core never learns of a sandbox whose create failed: until it is returned, any
  // failure must delete it, or it would outlive the call with nobody owning it.
  std::string toolbox_url;
  try {
    info = control_.wait_started(info, host);
    toolbox_url = control_.toolbox_url(info, host);
    if (request.idle == "pause") pause_when_idle(info, host);
  } catch (const Error&) {
    try {
      control_.remove(info.id);
    } catch (const Error& e) {
      host.warn("could not delete Daytona sandbox " + info.id + " that failed to start (" + e.what() +
                "); remove it with `corral stop --orphans --provider " + identity().settings.provider() + "`");
    }
    throw;
  }
  if (info.labels.empty()) info.labels = labels;
  Live& live = live_[info.id];
  live.started = true;
  live.toolbox_url = std::move(toolbox_url);
  return to_sandbox(info);
}

Sandbox DaytonaProvider::get(const std::string& id, const sdk::Host& host) {
  check_sandbox_id(id);
  return to_sandbox(control_.get(id, host));
}

std::vector<Sandbox> DaytonaProvider::list(const StringMap& labels, const sdk::Host& host) {
  return sdk::remote::list_owned(
      labels, [&](const StringMap& filter) { return control_.list(filter, host); },
      [this](const SandboxInfo& info) { return to_sandbox(info); });
}

void DaytonaProvider::destroy(const Sandbox& sandbox, const sdk::Host&) {
  check_sandbox_id(sandbox.id);
  control_.remove(sandbox.id);  // already gone counts as success
  live_.erase(sandbox.id);
}

SandboxInfo DaytonaProvider::started(const std::string& id, const sdk::Host& host) {
  SandboxInfo info = control_.wait_settled(control_.get(id, host), host);
  if (at_rest(info.state)) {
    host.progress("starting Daytona sandbox " + id + " (it was " + info.state + ")");
    info = control_.start(id, host);
  } else {
    info = control_.wait_started(info, host);
  }
  Live& live = live_[id];
  live.toolbox_url = control_.toolbox_url(info, host);
  live.started = true;
  return info;
}

Toolbox DaytonaProvider::toolbox_for(const Sandbox& sandbox, const sdk::Host& host) {
  check_sandbox_id(sandbox.id);
  if (!live_[sandbox.id].started) started(sandbox.id, host);
  return Toolbox(api_, live_[sandbox.id].toolbox_url, sandbox.id);
}

std::string DaytonaProvider::workdir_of(const Sandbox& sandbox, Toolbox& toolbox, const sdk::Host& host) {
  Live& live = live_[sandbox.id];
  if (live.home.empty()) live.home = toolbox.home_dir(host);
  return resolve_workdir(settings_.workdir, live.home);
}

ExecResult DaytonaProvider::exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) {
  sdk::remote::require_text_command(command, "Daytona");
  Toolbox toolbox = toolbox_for(sandbox, host);
  // A process group of its own, its id written down: Daytona has no way to signal a
  // session command, so the user's signal and a kill come from a second command.
  const std::string pid_file = "/tmp/corral-" + os::random_hex(8) + ".pid";
  SessionCommand c;
  // Deleting the session ended what the command left running; in a group of its own, that
  // group's leader ends it instead.
  c.argv = sdk::remote::in_process_group_argv(pid_file, argv_of(command), sdk::remote::Leftovers::end);
  c.cwd = join_workspace_path(workdir_of(sandbox, toolbox, host), command.cwd);
  c.home = live_[sandbox.id].home;
  c.env = command.env;
  if (command.forward_stdin) c.input = &host;
  for (const auto& [name, value] : c.env) check_env_name(name);
  sdk::CommandDeadline deadline(host, command.timeout_seconds);
  SessionHooks hooks = sdk::remote::command_hooks(host, deadline);
  // The user's stop reaches the command as its signal (exec-signals); the host cancels the
  // call only when it has not ended by it within --stop-timeout, and the kill below follows.
  hooks.stop = [&, stop = hooks.stop] {
    if (const int signal = host.take_signal(); signal != 0)
      beside_command(toolbox, sdk::remote::signal_group_argv(pid_file, signal), "pass the signal on",
                     "could not pass the signal on to the command in Daytona sandbox " + sandbox.id,
                     "; it is killed once --stop-timeout has passed", host, true);
    return stop();
  };
  try {
    return ExecResult{run_in_session(toolbox, c, hooks, "run the command")};
  } catch (const Error& e) {
    // Deleting the session does not reach the command's own process group: end it too,
    // unless the sandbox (or the key) is gone and with it any way in.
    if (e.code() != ErrorCode::not_found && e.code() != ErrorCode::auth)
      beside_command(toolbox, sdk::remote::kill_group_argv(pid_file), "stop the command",
                     "the command may still be running in Daytona sandbox " + sandbox.id + ": stopping it failed", "",
                     host, false);
    if (e.code() == ErrorCode::cancelled && deadline.timed_out())
      throw sdk::remote::command_timed_out(identity(), command.timeout_seconds, sandbox.id);
    throw;
  }
}

void DaytonaProvider::beside_command(Toolbox& toolbox, const std::vector<std::string>& argv, const std::string& step,
                                     const std::string& failed, const std::string& consequence,
                                     const sdk::Host& host, bool stoppable) {
  SessionCommand c;
  c.argv = argv;
  c.cwd = live_[toolbox.sandbox_id()].home;
  c.home = c.cwd;
  SessionHooks hooks = sdk::remote::quiet_hooks();
  if (stoppable) hooks.stop = [&host] { return host.cancelled(); };
  try {
    run_in_session(toolbox, c, hooks, step);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::cancelled) host.warn(failed + ": " + e.what() + consequence);
  }
}

void DaytonaProvider::upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host) {
  Toolbox toolbox = toolbox_for(sandbox, host);
  const std::string workdir = workdir_of(sandbox, toolbox, host);
  const size_t slash = workdir.rfind('/');
  const std::string parent = slash == 0 ? "/" : workdir.substr(0, slash);
  const std::string archive = parent + (parent == "/" ? "" : "/") + "." + workdir.substr(slash + 1) +
                              ".corral-upload.tar.gz";
  std::vector<std::string> remove_separately;
  const std::string removals = removal_list(request.removed, workdir, remove_separately);
  host.progress("uploading the workspace (" + megabytes(request.size) + ") to Daytona sandbox " + sandbox.id);
  toolbox.upload(request.archive_path, archive, [&host] { return host.cancelled(); }, host.transfer_reporter());
  std::string removal_file;
  if (!removals.empty()) {
    removal_file = archive.substr(0, archive.size() - std::string(".tar.gz").size()) + ".removed";
    os::TempFile list("daytona", removals);
    toolbox.upload(list.path(), removal_file, [&host] { return host.cancelled(); });
  }

  SessionCommand unpack;
  unpack.argv = {"/bin/sh", "-c", kUnpackScript, "corral-unpack", workdir, archive, removal_file};
  unpack.cwd = live_[sandbox.id].home;
  unpack.home = live_[sandbox.id].home;
  sdk::remote::StepErrors errors;
  const int code = run_in_session(toolbox, unpack, sdk::remote::step_hooks(host, errors.sink()),
                                  "unpack the workspace into " + workdir);
  if (code != 0)
    throw sdk::remote::step_failed(identity(), "unpacking the workspace into " + workdir, sandbox.id, code, errors,
                                   "the snapshot needs sh, tar and gzip, and its user must be able to write " + parent +
                                       "; see " + identity().settings.flag("workdir") + " and " +
                                       identity().settings.flag("user"));
  for (const std::string& path : remove_separately) toolbox.remove_path(path);
}

Sandbox DaytonaProvider::extend(const Sandbox& sandbox, std::int64_t seconds, const sdk::Host& host) {
  check_sandbox_id(sandbox.id);
  if (seconds <= 0 || seconds > 2147483647)
    throw Error(ErrorCode::invalid_argument, "a Daytona auto-stop extension must be positive");
  // Daytona has no lifetime to push back: a sandbox lives until it has been idle for its
  // auto-stop interval. Extending means asking for at least `seconds` of idleness.
  const std::int64_t minutes = (seconds + 59) / 60;
  control_.set_auto_stop(sandbox.id, minutes);
  host.info("Daytona sandbox " + sandbox.id + " now stops after " + format_duration(minutes * 60) +
            " without activity");
  return get(sandbox.id, host);
}

std::string DaytonaProvider::url(const Sandbox& sandbox, int port, const sdk::Host& host) {
  check_sandbox_id(sandbox.id);
  if (port < 1 || port > 65535)
    throw Error(ErrorCode::invalid_argument, "port " + std::to_string(port) + " is not between 1 and 65535");
  PreviewUrl preview = control_.preview_url(sandbox.id, port, host);
  if (!preview.token.empty())
    host.warn("this Daytona preview is private: send the header 'X-Daytona-Preview-Token: " + preview.token +
              "' with each request (e.g. curl -H 'X-Daytona-Preview-Token: " + preview.token + "' URL)");
  return preview.url;
}

}  // namespace corral::daytona
