#include "provider.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <mutex>
#include <optional>
#include <regex>

#include "corral/os/random.hpp"
#include "env_file.hpp"
#include "exec_io.hpp"
#include "corral/sdk/remote/process_group.hpp"
#include "exec_scripts.hpp"
#include "sandbox_name.hpp"
#include "sbx_errors.hpp"

namespace fs = std::filesystem;

namespace corral::docker_sandbox {
namespace {

// The first `limit` bytes of a stream: what sbx prints before a command starts, kept
// while the output itself is streamed in constant memory.
class Head {
 public:
  explicit Head(size_t limit) : limit_(limit) {}
  void add(std::string_view data) {
    if (text_.size() < limit_) text_.append(data.substr(0, limit_ - text_.size()));
  }
  const std::string& text() const { return text_; }

 private:
  size_t limit_;
  std::string text_;
};

Error gone(const std::string& name) {
  return Error(ErrorCode::not_found, "Docker Sandbox '" + name + "' no longer exists",
               "it was removed outside corral (sbx rm, sbx reset); start a new run without --id");
}

// sbx's word for a sandbox `sbx stop` stopped: it keeps its files, so corral calls it paused.
constexpr char kStopped[] = "stopped";

Sandbox to_sandbox(const SbxEntry& e) {
  Sandbox s;
  s.id = e.name;
  s.state = e.status.empty() ? "unknown" : e.status;
  if (e.status == kStopped) {
    s.state = "paused";
    s.details["provider-state"] = e.status;
  }
  s.details["name"] = e.name;
  if (!e.workspace.empty()) s.details["workspace"] = e.workspace;
  if (!e.agent.empty()) s.details["agent"] = e.agent;
  if (auto parts = parse_sandbox_name(e.name)) s.labels = labels_of(*parts);
  return s;
}

// True unless sbx reports a state in which no command can be running (stopped, exited,
// ...). sbx documents no state names, so an unknown or empty one counts as running.
bool may_be_running(const std::string& status) {
  if (status.empty()) return true;
  for (const char* word : {"run", "up", "ready", "active", "healthy"})
    if (status.find(word) != std::string::npos) return true;
  return false;
}

// A fresh path in the sandbox's /tmp for one command's exit status or process group.
std::string tmp_path(const char* prefix) { return os::random_tag(std::string("/tmp/corral-") + prefix); }

// The host's Ctrl-C flag as sbx invocations poll it.
std::function<bool()> interruptible(const sdk::Host& host) {
  return [&host] { return host.cancelled(); };
}

}  // namespace

DockerSandboxProvider::DockerSandboxProvider(const sdk::Options& options)
    : cli_(options.get("cli", "sbx").empty() ? "sbx" : options.get("cli", "sbx"),
           static_cast<long>(options.get_duration("cli-timeout", 300))),
      template_(options.get("template")),
      memory_(options.get("memory")),
      workdir_(options.get("workdir")) {
  if (cli_.timeout_seconds() <= 0)
    throw Error(ErrorCode::invalid_argument, "option 'cli-timeout' must be longer than zero",
                "use a duration such as 90s or 5m");
  if (options.has("cpus") && !options.get("cpus").empty()) {
    std::int64_t cpus = options.get_int("cpus", 0);
    if (cpus < 0)
      throw Error(ErrorCode::invalid_argument, "option 'cpus' must be 0 (automatic) or more, not " + std::to_string(cpus));
    cpus_ = std::to_string(cpus);
  }
  static const std::regex kMemory("[0-9]+[bkmgBKMG]?");
  if (!memory_.empty() && !std::regex_match(memory_, kMemory))
    throw Error(ErrorCode::invalid_argument, "option 'memory' must be a size in binary units, not '" + memory_ + "'",
                "use a number with an optional unit: 1024m, 8g");
  if (!workdir_.empty() && workdir_[0] != '/')
    throw Error(ErrorCode::invalid_argument, "option 'workdir' must be an absolute path, not '" + workdir_ + "'");
}

std::vector<DoctorCheck> DockerSandboxProvider::doctor(const sdk::Host&) {
  std::vector<DoctorCheck> checks;
  std::string path = os::find_program(cli_.cli());
  if (path.empty()) {
    Error e = sbx_missing(cli_.cli());
    checks.push_back({"sbx CLI", false, e.what(), e.hint()});
    return checks;
  }
  checks.push_back({"sbx CLI", true, path, ""});

  auto probe = [&](const std::string& name, const std::vector<std::string>& args, const std::string& ok_detail) {
    try {
      SbxResult r = cli_.capture(args);
      if (r.exit_code == 0) {
        std::string detail = gist(r.out);
        checks.push_back({name, true, detail.empty() ? ok_detail : detail, ""});
      } else {
        Error e = sbx_failed(args[0], r.exit_code, r.err + "\n" + r.out);
        checks.push_back({name, false, e.what(), e.hint()});
      }
    } catch (const Error& e) {
      checks.push_back({name, false, e.what(), e.hint()});
    }
  };
  probe("sbx version", {"version"}, "sbx answers");
  probe("sbx diagnose", {"diagnose"}, "all checks passed");
  return checks;
}

Sandbox DockerSandboxProvider::create(const CreateRequest& request, const sdk::Host& host) {
  if (request.workspace.empty())
    throw Error(ErrorCode::invalid_argument, "docker-sandbox needs the workspace path to mount");
  // sbx mounts the resolved path; commands must name the same one.
  std::error_code ec;
  std::string workspace = fs::weakly_canonical(fs::absolute(request.workspace), ec).string();
  if (ec) workspace = fs::absolute(request.workspace).lexically_normal().string();
  if (workspace.size() > 1 && workspace.back() == '/') workspace.pop_back();
  std::string name = sandbox_name(request.slug, request.lease_id);

  std::vector<std::string> args{"create", "--name", name};
  if (!template_.empty()) args.insert(args.end(), {"--template", template_});
  if (!cpus_.empty()) args.insert(args.end(), {"--cpus", cpus_});
  if (!memory_.empty()) args.insert(args.end(), {"--memory", memory_});
  args.insert(args.end(), {"shell", workspace});

  cli_.executable();  // a missing sbx made nothing, so there is nothing to remove
  host.progress("creating Docker Sandbox " + name);
  bool answered = false;  // sbx ended on its own rather than being stopped
  try {
    SbxResult r = cli_.capture(args, interruptible(host));
    answered = true;
    if (r.exit_code != 0) throw sbx_failed("create", r.exit_code, r.err + "\n" + r.out);
    if (std::string said = gist(r.out + "\n" + r.err); !said.empty()) host.debug("sbx create: " + said);
  } catch (const Error&) {
    // Any failed create (cut short, or sbx failing after registering the name) may have
    // left a sandbox that no claim records; the name is this lease's own, so remove it.
    remove_failed_create(name, !answered, host);
    throw;
  }

  Sandbox s;
  s.id = name;
  s.state = "running";
  s.labels = request.labels;
  s.details["name"] = name;
  s.details["workspace"] = workspace;
  if (!template_.empty()) s.details["template"] = template_;
  if (!cpus_.empty()) s.details["cpus"] = cpus_;
  if (!memory_.empty()) s.details["memory"] = memory_;
  return s;
}

void DockerSandboxProvider::remove_failed_create(const std::string& name, bool cut_short,
                                                 const sdk::Host& host) const {
  std::string why;
  try {
    SbxResult r = cli_.capture({"rm", "-f", name});  // not interruptible: cleanup after Ctrl-C too
    if (r.exit_code == 0) {
      host.debug("removed Docker Sandbox " + name + " after the failed create");
      return;
    }
    why = gist(r.err + "\n" + r.out);
  } catch (const Error& e) {
    why = e.what();
  }
  // rm also fails when create registered nothing, so only a listed sandbox is left behind.
  std::string remove = "; remove it with `sbx rm -f " + name + "`";
  try {
    if (find_entry(entries({}), name))
      host.warn("the failed create left Docker Sandbox " + name + " behind and `sbx rm -f` did not remove it (" +
                why + ")" + remove);
  } catch (const Error& e) {
    // sbx cannot list either. A create cut short may have got far; one that sbx refused
    // (not signed in, no virtualization) made nothing, and the error already says why.
    std::string text = "cannot tell whether the failed create left Docker Sandbox " + name + " behind (" +
                       e.what() + "); if `sbx ls` shows it" + remove;
    if (cut_short) host.warn(text);
    else host.debug(text);
  }
}

std::vector<SbxEntry> DockerSandboxProvider::entries(const std::function<bool()>& cancelled) const {
  return parse_ls_json(cli_.run({"ls", "--json"}, cancelled).out);
}

Sandbox DockerSandboxProvider::listed(const std::string& name, const sdk::Host& host) const {
  auto e = find_entry(entries(interruptible(host)), name);
  if (!e) throw gone(name);
  return to_sandbox(*e);
}

Sandbox DockerSandboxProvider::get(const std::string& id, const sdk::Host& host) { return listed(id, host); }

std::vector<Sandbox> DockerSandboxProvider::list(const StringMap& labels, const sdk::Host& host) {
  std::vector<Sandbox> out;
  for (const SbxEntry& e : entries(interruptible(host))) {
    auto parts = parse_sandbox_name(e.name);
    if (parts && name_matches(*parts, labels)) out.push_back(to_sandbox(e));
  }
  return out;
}

void DockerSandboxProvider::destroy(const Sandbox& sandbox, const sdk::Host&) {
  if (!parse_sandbox_name(sandbox.id))
    throw Error(ErrorCode::invalid_argument, "refusing to remove Docker Sandbox '" + sandbox.id + "': corral did not create it",
                "remove it yourself with `sbx rm " + sandbox.id + "` if you mean to");
  // Cleanup runs after Ctrl-C too, so neither call is interruptible (both are bounded
  // by the control timeout).
  SbxResult r = cli_.capture({"rm", "-f", sandbox.id});
  if (r.exit_code == 0) return;
  // rm fails for a sandbox that is already gone, which counts as success; ask ls.
  if (!find_entry(entries({}), sandbox.id)) return;
  throw sbx_failed("rm", r.exit_code, r.err + "\n" + r.out);
}

Sandbox DockerSandboxProvider::pause(const Sandbox& sandbox, const sdk::Host& host) {
  host.progress("stopping Docker Sandbox " + sandbox.id);
  SbxResult r = cli_.capture({"stop", sandbox.id}, interruptible(host));
  if (r.exit_code != 0) {
    listed(sandbox.id, host);  // a sandbox that is gone is not-found, whatever stop said
    throw sbx_failed("stop", r.exit_code, r.err + "\n" + r.out);
  }
  return listed(sandbox.id, host);
}

Sandbox DockerSandboxProvider::resume(const Sandbox& sandbox, const sdk::Host& host) {
  // sbx has no start command of its own: exec starts a stopped sandbox first.
  host.progress("starting Docker Sandbox " + sandbox.id);
  SbxResult r = cli_.capture({"exec", sandbox.id, "true"}, interruptible(host));
  if (r.exit_code != 0) {
    if (auto e = exec_failure(sandbox.id, r.err + "\n" + r.out, host)) throw *e;
    throw sbx_failed("exec", r.exit_code, r.err + "\n" + r.out);
  }
  return listed(sandbox.id, host);
}

std::string DockerSandboxProvider::exec_dir(const Sandbox& sandbox, const std::string& cwd) const {
  std::string base = workdir_;
  if (base.empty()) {
    auto it = sandbox.details.find("workspace");
    if (it != sandbox.details.end()) base = it->second;
  }
  const std::string relative = join_workspace_path("", cwd);  // validates; "" at the root
  if (base.empty()) {
    if (relative.empty()) return {};
    throw Error(ErrorCode::invalid_argument, "cannot tell where Docker Sandbox '" + sandbox.id + "' mounts the workspace",
                "set --docker-sandbox-workdir to the workspace folder inside the sandbox");
  }
  return join_workspace_path(base, cwd);
}

void DockerSandboxProvider::stop_quietly(const std::string& name, const sdk::Host& host) const {
  try {
    SbxResult r = cli_.capture({"stop", name});
    if (r.exit_code != 0)
      host.warn("`sbx stop " + name + "` failed: " + gist(r.err + "\n" + r.out) +
                "; the interrupted command may still be running in the sandbox");
  } catch (const Error& e) {
    host.warn(std::string("could not stop Docker Sandbox ") + name + ": " + e.what());
  }
}

void DockerSandboxProvider::signal_command(const std::string& name, const std::string& pid_file, int signal,
                                           const sdk::Host& host) const {
  std::vector<std::string> args{"exec", name};
  for (std::string& word : sdk::remote::signal_group_argv(pid_file, signal)) args.push_back(std::move(word));
  try {
    SbxResult r = cli_.capture(args, interruptible(host));
    if (r.exit_code == 0) return;
    host.warn("could not pass the signal on to the command in Docker Sandbox " + name + ": " +
              gist(r.err + "\n" + r.out) + "; it is stopped once --stop-timeout has passed");
  } catch (const Error& e) {
    host.warn("could not pass the signal on to the command in Docker Sandbox " + name + ": " + e.what() +
              "; it is stopped once --stop-timeout has passed");
  }
}

ExecResult DockerSandboxProvider::exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) {
  if (command.argv.empty() && command.shell.empty())
    throw Error(ErrorCode::invalid_argument, "nothing to run: the command is empty");
  std::vector<std::string> args{"exec"};
  if (std::string dir = exec_dir(sandbox, command.cwd); !dir.empty()) args.insert(args.end(), {"-w", dir});
  std::optional<EnvFile> env_file;  // removed when exec returns or throws
  if (!command.env.empty()) {
    env_file.emplace(command.env);
    args.insert(args.end(), {"--env-file", env_file->path()});
  }
  if (command.tty) args.push_back("-t");
  if (command.forward_stdin) args.push_back("-i");
  const std::string status = tmp_path("status-");
  const std::string pid_file = tmp_path("pid-");
  args.push_back(sandbox.id);
  for (std::string& word : run_argv(command, status, pid_file, command.tty)) args.push_back(std::move(word));

  // Output comes from sbx's stderr and, with -t, from the terminal's reader thread: one
  // emit at a time reaches the host.
  std::mutex emitting;
  const auto emit = [&](corral_stream stream, std::string_view data) {
    std::lock_guard lock(emitting);
    host.emit(stream, data);
  };
  ExecIo exec_io(command, host, [&](std::string_view d) { emit(CORRAL_STDOUT, d); });
  SbxIo io = exec_io.sbx_io();
  // The user's stop reaches the command as its signal (exec-signals): `sbx exec`, like
  // `docker exec`, passes none on. The host cancels only when the command has not ended
  // by it within --stop-timeout, and the sandbox is stopped below.
  io.on_tick = [&] {
    exec_io.tick();
    if (const int signal = host.take_signal(); signal != 0) signal_command(sandbox.id, pid_file, signal, host);
  };
  Head head(1024);
  os::ProcessOutcome o = cli_.stream(
      args, [&](std::string_view d) { emit(CORRAL_STDOUT, d); },
      [&](std::string_view d) {
        emit(CORRAL_STDERR, d);
        head.add(d);
      },
      interruptible(host), static_cast<long>(command.timeout_seconds), io);
  exec_io.finish();  // what the command wrote last on a terminal is passed on before the result
  if (o.cancelled || o.timed_out) {
    // Like `docker exec`, ending the client does not end the command in the sandbox.
    stop_quietly(sandbox.id, host);
    if (o.timed_out)
      throw Error(ErrorCode::timeout,
                  "the command did not finish within " + format_duration(command.timeout_seconds),
                  "allow more time with --timeout, or make the command faster");
    throw Error(ErrorCode::cancelled, "the command was interrupted");
  }
  if (o.exit_code == 0) return {0};
  if (auto own = recorded_status(sandbox.id, status, host)) return {*own};
  // The command did not finish: sbx could not run it, or sbx exec ended under it.
  if (auto e = exec_failure(sandbox.id, head.text(), host)) throw *e;
  stop_quietly(sandbox.id, host);
  std::string said = gist(head.text());
  throw Error(ErrorCode::unavailable,
              "`sbx exec` ended (exit " + std::to_string(o.exit_code) + ") before the command finished" +
                  (said.empty() ? std::string() : ": " + said),
              "the connection to the sandbox may have dropped; the command was stopped. Run it again; "
              "if this keeps happening, run `sbx diagnose`");
}

std::optional<int> DockerSandboxProvider::recorded_status(const std::string& name, const std::string& path,
                                                         const sdk::Host& host) const {
  SbxResult r;
  try {
    std::vector<std::string> args{"exec", name};
    for (std::string& word : take_status_argv(path)) args.push_back(std::move(word));
    r = cli_.capture(args, interruptible(host));
  } catch (const Error& e) {
    if (e.code() == ErrorCode::cancelled) throw;
    host.debug(std::string("cannot read the command's exit status: ") + e.what());
    return std::nullopt;
  }
  std::string text = r.out;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (r.exit_code != 0 || text.empty() || text.size() > 3 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::stoi(text);
}

std::optional<Error> DockerSandboxProvider::exec_failure(const std::string& name, const std::string& stderr_head,
                                                        const sdk::Host& host) const {
  std::vector<SbxEntry> listed;
  try {
    listed = entries(interruptible(host));
  } catch (const Error& e) {
    if (e.code() == ErrorCode::cancelled) throw;
    // sbx cannot even list: exec's words count only when they name the same condition.
    auto known = known_condition(stderr_head);
    if (known && known->code() == e.code()) return known;
    host.warn(std::string("could not check the Docker Sandbox after the command failed: ") + e.what());
    return std::nullopt;
  }
  auto entry = find_entry(listed, name);
  if (!entry) return gone(name);
  // A sandbox that is not running could not have run the command; what sbx printed
  // before giving up says why.
  if (!may_be_running(entry->status)) return known_condition(stderr_head);
  return std::nullopt;
}

}  // namespace corral::docker_sandbox
