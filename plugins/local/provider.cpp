#include "provider.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <system_error>

#include "bwrap.hpp"
#include "corral/option_default.hpp"
#include "corral/sdk.hpp"
#include "corral/sdk/command_terminal.hpp"
#include "corral/sdk/download.hpp"
#include "corral/sdk/input_pump.hpp"
#include "corral/os/parallel_thread.hpp"
#include "corral/sdk/printable.hpp"
#include "corral/os/process.hpp"
#include "corral/sdk/sync.hpp"
#include "corral/wire.hpp"
#include "jail_exec_file.hpp"
#include "jail_ids.hpp"
#include "jail_namespaces.hpp"
#include "jail_process.hpp"
#include "sandbox_store.hpp"
#include "size_guard.hpp"
#include "workspace_copy.hpp"

namespace fs = std::filesystem;

namespace corral::local {
namespace {

// The process's environment, as the SDK's XDG folder rule reads it.
std::optional<std::string> getenv_of(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value ? std::optional<std::string>(value) : std::nullopt;
}

std::string default_dir() { return (xdg_folder("XDG_STATE_HOME", getenv_of) / "corral" / "local").string(); }

}  // namespace

LocalProvider::LocalProvider(const sdk::Options& options)
    : store_(options.get("dir").empty() ? default_dir() : options.get("dir"), jail_ids()),
      bwrap_(options.get("bwrap", "bwrap")),
      network_(options.get("network", "shared") != "none"),
      workdir_(options.get("workdir", "/workspace")),
      egress_ca_file_(options.get("egress-ca-file")) {
  if (const std::string problem = workdir_problem(workdir_); !problem.empty())
    throw Error(ErrorCode::invalid_argument,
                "the local workdir '" + sdk::printable(workdir_) + "' cannot hold the workspace: " + problem,
                "choose a folder of your own, e.g. --local-workdir /workspace or /src/app (local.workdir in "
                "corral.yaml)");
}

std::vector<DoctorCheck> LocalProvider::doctor(const sdk::Host&) {
  std::vector<DoctorCheck> checks;
  std::string path = os::find_program(bwrap_);
  checks.push_back({"bubblewrap installed", !path.empty(), path.empty() ? "'" + bwrap_ + "' not found on PATH" : path,
                    path.empty() ? "install it: sudo apt-get install -y bubblewrap (or set CORRAL_BWRAP)" : ""});
  bool starter = true;
  try {
    (void)open_jail_exec(any_jail_user(), starter_verified());
    checks.push_back({"jail starter installed", true, jail_exec_path().string(), ""});
  } catch (const Error& e) {
    starter = false;
    checks.push_back({"jail starter installed", false, e.what(), e.hint()});
  }
  if (!path.empty() && starter) {
    // The one place bwrap is probed: a run reports a jail that fails to start anyway.
    try {
      Command probe;
      probe.argv = {"true"};
      probe.timeout_seconds = 30;
      // As root the probe jail gets a user of its own, as every sandbox's jail does.
      std::optional<JailIdReservation> probe_user;
      if (store_.own_users()) probe_user.emplace(store_.ids()->reserve(fs::absolute(store_.root()) / ".doctor"));
      const std::optional<JailUser> as = probe_user ? std::optional(probe_user->user()) : std::nullopt;
      os::ProcessOutcome o = run_jailed(jail_spec(path, ""), std::string(), as, probe, {}, {}, {}, 30);
      bool ok = o.exit_code == 0;
      checks.push_back({"user namespaces usable", ok, ok ? jail_identity() : "the probe jail exited with " + std::to_string(o.exit_code),
                        ok ? "" : "run the same with `bwrap --unshare-user --dev /dev true` to see why"});
    } catch (const Error& e) {
      checks.push_back({"user namespaces usable", false, e.what(), e.hint()});
    }
  }
  std::error_code ec;
  fs::create_directories(store_.root(), ec);
  bool writable = !ec && ::access(store_.root().c_str(), W_OK) == 0;
  checks.push_back({"sandbox folder writable", writable, store_.root().string(),
                    writable ? "" : "set CORRAL_LOCAL_DIR to a writable folder"});
  return checks;
}

Sandbox LocalProvider::create(const CreateRequest& request, const sdk::Host&) {
  ensure_jail_installed();
  // allow: a network namespace of its own, and the listed hosts through the egress proxy.
  const bool no_network = request.network.mode != NetworkPolicy::Mode::open;
  const std::vector<std::string>& egress = request.network.allow;
  if (request.network.mode == NetworkPolicy::Mode::allow && egress.empty())
    throw Error(ErrorCode::invalid_argument, "an allow list without entries", "use --network none for no network");
  if (request.ephemeral && fits_in_memory(request.workspace_bytes))
    if (std::optional<LocalSandbox> s = create_in_memory(request, no_network)) return to_sandbox(*s);
  // On disk the run's bound is kept with the sandbox, which a SizeGuard holds it to.
  return to_sandbox(
      store_.create(request.slug, request.labels, no_network, /*in_memory=*/false, egress, request.workspace_bytes));
}

std::vector<Sandbox> LocalProvider::list(const StringMap& labels, const sdk::Host&) {
  std::vector<Sandbox> out;
  for (const LocalSandbox& s : store_.all())
    if (wire::labels_match(s.labels, labels)) out.push_back(to_sandbox(s));
  return out;
}

void LocalProvider::destroy(const Sandbox& sandbox, const sdk::Host&) {
  std::shared_ptr<JailNamespaces> memory;
  {
    std::lock_guard lock(memory_mutex_);
    if (auto found = in_memory_.find(sandbox.id); found != in_memory_.end()) {
      memory = std::move(found->second);
      in_memory_.erase(found);
    }
  }
  // Freeing a tmpfs's files takes about as long as removing the record from the disk:
  // both at once. The tmpfs goes with the last jail using it.
  os::ParallelThread release;
  if (memory) {
    try {
      release = os::ParallelThread([memory = std::move(memory)]() mutable { memory.reset(); });
    } catch (const std::system_error&) {
      // No thread to be had: the tmpfs went here, with the work the thread would have done.
    }
  }
  store_.remove(sandbox.id);
}

void LocalProvider::upload(const Sandbox& sandbox, const UploadRequest& request, const sdk::Host& host) {
  if (request.tree_root.empty())
    throw Error(ErrorCode::invalid_argument, "the local provider copies the working tree itself (tree-sync), "
                "and this upload names none",
                "use the corral this plugin was built with");
  const LocalSandbox s = running(sandbox.id);
  // Held to the end: workspace_path() names the tmpfs by its descriptor's number, which
  // a concurrent destroy would otherwise close and a later open() could reuse.
  const std::shared_ptr<JailNamespaces> memory = s.in_memory ? memory_of(s) : nullptr;
  if (!s.in_memory) store_.prepare_workspace(s);
  // A sandbox synced before: only what differs from the tree, or changed there since, is copied.
  const std::optional<timespec> copied_at = s.in_memory ? std::nullopt : store_.copied_at(s.id);
  try {
    copy_workspace(request, workspace_path(s), s.user, host, copied_at);
    if (!s.in_memory) store_.set_copied_at(s.id, file_clock_now());
  } catch (const Error& e) {
    if (e.code() != ErrorCode::quota || !s.in_memory) throw;
    throw Error(ErrorCode::quota, e.what(),
                "the sandbox's in-memory workspace is bounded by --max-workspace (plus 4 KiB a file): raise it");
  }
  sdk::remove_paths_under(workspace_path(s), request.removed);
}

ExecResult LocalProvider::exec(const Sandbox& sandbox, const Command& command, const sdk::Host& host) {
  const LocalSandbox s = running(sandbox.id);
  const JailWorkspace workspace = jail_workspace(s);
  if (!command.cwd.empty() && !fs::is_directory(workspace_path(s) / command.cwd))
    throw Error(ErrorCode::invalid_argument, "the folder '" + command.cwd + "' is not in the synced workspace",
                "run corral from a folder that holds at least one file corral syncs");
  JailSpec jail = jail_spec(bwrap_, "corral-" + s.slug, s.no_network);
  if (network_) jail.egress = s.egress;  // --local-network none: no way out at all
  if (!command.secrets.empty()) {
    if (jail.egress.empty())
      throw Error(ErrorCode::invalid_argument,
                  "sandbox " + s.id + " has no egress proxy to put secrets in: it was made without --network allow:" +
                      (network_ ? "" : " (or the local network option is none)"),
                  "start a new sandbox with --secret and --network allow:...");
    jail.secrets = command.secrets;
    jail.egress_ca_file = egress_ca_file_;
  }
  EgressReport egress;
  // Output comes from the jail's pipes and, with -t, from its terminal's reader thread:
  // one emit at a time reaches the host.
  std::mutex emitting;
  const auto emit = [&](corral_stream stream, std::string_view data) {
    std::lock_guard lock(emitting);
    host.emit(stream, data);
  };
  JailIo io;
  io.take_signal = [&] { return host.take_signal(); };
  // -t: the command's stdin, stdout and stderr are a terminal of its own, the user's keys
  // its input. Else with the user's input: a pipe a pump fills, closed at the input's end.
  std::optional<sdk::CommandTerminal> terminal;
  std::optional<os::Pipe> input;
  int input_fd = -1;
  std::uint16_t rows = 24, cols = 80;
  if (command.tty) {
    (void)host.window_size(rows, cols);
    terminal.emplace(rows, cols, [&](std::string_view d) { emit(CORRAL_STDOUT, d); });
    io.stdin_fd = terminal->command_end();
    io.terminal = input_fd = terminal->corral_end();
    io.on_tick = [&] {
      if (host.window_size(rows, cols)) terminal->resize(rows, cols);
    };
  } else if (command.forward_stdin) {
    input.emplace();
    ::fcntl(input->write.get(), F_SETFL, O_NONBLOCK);
    io.stdin_fd = input->read.get();
    input_fd = input->write.get();
    // Once the jail holds the read end, corral's copy goes: a command that closes its stdin
    // then fails the pump's next write, which stops taking the user's input.
    io.on_tick = [&input] { input->read.reset(); };
  }
  std::optional<sdk::InputPump> pump;
  if (input_fd >= 0)
    pump.emplace(
        host, [input_fd](std::string_view data, const std::atomic<bool>& stopping) {
          return sdk::write_to_fd(input_fd, data, stopping);
        },
        // The end of a pipe's input closes it; a terminal has none (its keys go on until the command ends).
        [&input] {
          if (input) input->write.reset();
        });
  SizeGuard size_guard(guarded_folders(s), s.in_memory ? 0 : s.size_limit);
  os::ProcessOutcome outcome = run_jailed(
      std::move(jail), workspace, s.user, command, [&](std::string_view d) { emit(CORRAL_STDOUT, d); },
      [&](std::string_view d) { emit(CORRAL_STDERR, d); },
      [&] { return host.cancelled() || size_guard.exceeded(); }, command.timeout_seconds, &egress, io);
  pump.reset();
  terminal.reset();  // what the command wrote last is passed on before the result
  if (!s.egress.empty()) {
    try {
      store_.add_egress(s.id, egress);
    } catch (const Error& e) {
      // The count is for the user to read, not what the command did: the run stands.
      host.warn("could not record what sandbox " + s.id + " reached: " + e.what());
    }
  }
  if (outcome.cancelled && host.cancelled()) throw Error(ErrorCode::cancelled, "the command was stopped");
  if (!outcome.timed_out && size_guard.check_now())
    throw Error(ErrorCode::quota,
                "local sandbox " + s.id + ": " + size_guard.what_exceeded() +
                    (outcome.cancelled ? "; the command was stopped"
                                       : "; the command ended with exit code " + std::to_string(outcome.exit_code) +
                                             ", and the run fails as a write past the limit would have"),
                "the limit is the --max-workspace of the run that made the sandbox, plus 4 KiB a file, for each of "
                "its workspace and its /tmp: remove what it no longer needs (e.g. `corral run --id LEASE -- rm -rf "
                "build`), or make a new sandbox with a higher --max-workspace (0 = no limit)");
  if (outcome.cancelled) throw Error(ErrorCode::cancelled, "the command was stopped");
  if (outcome.timed_out)
    throw Error(ErrorCode::timeout,
                "the command ran longer than " + format_duration(command.timeout_seconds) + " and was stopped",
                "raise --timeout if it needs longer");
  ExecResult result{outcome.exit_code};
  if (!s.egress.empty()) result.egress = std::move(egress);
  return result;
}

DownloadResult LocalProvider::download(const Sandbox& sandbox, const DownloadRequest& request, const sdk::Host& host) {
  const LocalSandbox s = running(sandbox.id);
  const JailWorkspace workspace = jail_workspace(s);
  auto in_jail = [&](const std::string& script, const sdk::OutputSink& out, const sdk::OutputSink& err,
                     const std::function<bool()>& stop) {
    Command pack;
    pack.argv = {"/bin/sh", "-c", script};
    os::ProcessOutcome o = run_jailed(jail_spec(bwrap_, "corral-" + s.slug, /*no_network=*/true), workspace, s.user, pack, out,
                                       err, stop);
    return sdk::StreamedScript{o.exit_code, o.cancelled};
  };
  return sdk::download_through_stdout(request, join_workspace_path(workdir_, request.cwd), in_jail,
                                      [&] { return host.cancelled(); });
}

Sandbox LocalProvider::pause(const Sandbox& sandbox, const sdk::Host&) {
  LocalSandbox s = existing(sandbox.id);
  if (!s.paused) store_.set_paused(s, true);
  return to_sandbox(s);
}

Sandbox LocalProvider::resume(const Sandbox& sandbox, const sdk::Host&) {
  LocalSandbox s = existing(sandbox.id);
  if (s.paused) store_.set_paused(s, false);
  return to_sandbox(s);
}

std::vector<ForkOutcome> LocalProvider::fork(const Sandbox& source, const std::vector<ForkTarget>& targets,
                              const sdk::Host& host) {
  const LocalSandbox from = existing(source.id);
  if (from.in_memory)
    throw Error(ErrorCode::unsupported, "local sandbox " + source.id + " is not kept: its workspace lives only in "
                "the memory of the run that made it",
                "fork a kept sandbox: `corral run --keep` or `corral warmup`");
  std::vector<ForkOutcome> out;
  try {
    for (const ForkTarget& target : targets) {
      if (host.cancelled()) throw Error(ErrorCode::cancelled, "forking was interrupted");
      ForkOutcome made;
      try {
        made.sandbox = to_sandbox(store_.fork(from, target.slug, target.labels));
      } catch (const Error& e) {
        if (e.code() != ErrorCode::quota) throw;
        made.error = e;  // a full disk fails this fork and the ones after it, not the call
      }
      out.push_back(std::move(made));
    }
  } catch (const Error&) {
    for (const ForkOutcome& f : out) {
      if (!f.sandbox) continue;
      try {
        store_.remove(f.sandbox->id);
      } catch (const Error&) {
        // The fork carries its labels: `corral stop --orphans` finds it.
      }
    }
    throw;
  }
  return out;
}

std::string LocalProvider::url(const Sandbox& sandbox, int port, const sdk::Host&) {
  const LocalSandbox s = existing(sandbox.id);
  if (s.no_network)
    throw Error(ErrorCode::unsupported,
                "local sandbox " + sandbox.id + " was created with --network " +
                    (s.egress.empty() ? std::string("none") : "allow:") + ": its ports are in a network of its own",
                "start a sandbox with --network open to reach its ports");
  if (!network_)
    throw Error(ErrorCode::unsupported, "this local sandbox has no network to reach (network = none)",
                "use --local-network shared to reach its ports");
  return "http://127.0.0.1:" + std::to_string(port);
}

bool LocalProvider::fits_in_memory(std::uint64_t bytes) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return bytes > 0 && pages > 0 && page > 0 && bytes <= static_cast<std::uint64_t>(pages) * page / 2;
}

std::optional<LocalSandbox> LocalProvider::create_in_memory(const CreateRequest& request, bool no_network) {
  // Recorded first: the record gives the sandbox its user, whom the tmpfs belongs to.
  LocalSandbox s = store_.create(request.slug, request.labels, no_network, /*in_memory=*/true, request.network.allow);
  std::shared_ptr<JailNamespaces> namespaces;
  try {
    namespaces =
        std::make_shared<JailNamespaces>(JailNamespaces::create_in_memory(s.user, request.workspace_bytes));
  } catch (const Error&) {
    store_.remove(s.id);
    return std::nullopt;  // e.g. no unprivileged user namespaces but a setuid bwrap: the disk works
  }
  std::lock_guard lock(memory_mutex_);
  in_memory_[s.id] = std::move(namespaces);
  return s;
}

std::shared_ptr<JailNamespaces> LocalProvider::memory_of(const LocalSandbox& s) const {
  std::lock_guard lock(memory_mutex_);
  auto found = in_memory_.find(s.id);
  if (found != in_memory_.end()) return found->second;
  throw Error(ErrorCode::unavailable,
              "local sandbox " + s.id + " was made for a run that does not keep it; its workspace lives in that "
              "run's memory only",
              "remove it with `corral stop --id LEASE` or `corral stop --orphans`; keep a sandbox to reuse with "
              "--keep");
}

fs::path LocalProvider::workspace_path(const LocalSandbox& s) const {
  if (!s.in_memory) return store_.workspace_of(s.id);
  return "/proc/self/fd/" + std::to_string(memory_of(s)->workspace_fd());
}

std::vector<GuardedFolder> LocalProvider::guarded_folders(const LocalSandbox& s) const {
  if (s.in_memory) return {};
  std::vector<GuardedFolder> folders{{"its workspace", store_.workspace_of(s.id)}};
  if (const std::string tmp = store_.kept_tmp(s); !tmp.empty()) folders.push_back({"its /tmp (and $HOME)", tmp});
  return folders;
}

JailWorkspace LocalProvider::jail_workspace(const LocalSandbox& s) const {
  if (s.in_memory) return JailWorkspace(memory_of(s));
  store_.require_workspace(s);
  JailWorkspace workspace(store_.workspace_of(s.id).string());
  workspace.tmp_folder = store_.kept_tmp(s);
  return workspace;
}

LocalSandbox LocalProvider::existing(const std::string& id) const {
  auto s = store_.find(id);
  if (!s) throw Error(ErrorCode::not_found, "local sandbox " + id + " does not exist");
  return *s;
}

LocalSandbox LocalProvider::running(const std::string& id) const {
  LocalSandbox s = existing(id);
  if (s.paused)
    throw Error(ErrorCode::unavailable, "local sandbox " + id + " is paused",
                "resume it first: `corral resume --id LEASE` (or `corral run --id LEASE`, which resumes it)");
  return s;
}

std::optional<JailUser> LocalProvider::any_jail_user() const {
  if (!store_.own_users()) return std::nullopt;
  return JailUser{kJailIdFirst, static_cast<gid_t>(kJailIdFirst)};
}

std::string LocalProvider::jail_identity() const {
  if (!store_.own_users()) return "bwrap can create a jail (in its own user namespace, as you)";
  return "bwrap can create a jail (as a uid of its own from " + std::to_string(kJailIdFirst) + "-" +
         std::to_string(kJailIdFirst + kJailIdCount - 1) +
         ", in its own user namespace: root outside is not root inside, and no other process shares it)";
}

std::string LocalProvider::starter_verified() {
  return (xdg_folder("XDG_CACHE_HOME", getenv_of) / "corral" / "local-jail-exec-verified").string();
}

JailSpec LocalProvider::jail_spec(const std::string& bwrap, const std::string& hostname, bool no_network) const {
  JailSpec jail;
  jail.starter_verified = starter_verified();
  jail.bwrap = bwrap;
  jail.workdir = workdir_;
  jail.hostname = hostname;
  jail.network = network_ && !no_network;
  return jail;
}

void LocalProvider::ensure_jail_installed() const {
  if (os::find_program(bwrap_).empty())
    throw Error(ErrorCode::unavailable, "bubblewrap ('" + bwrap_ + "') is not installed",
                "install it with `sudo apt-get install -y bubblewrap`, or set CORRAL_BWRAP to its path");
  (void)open_jail_exec(any_jail_user(), starter_verified());
}

Sandbox LocalProvider::to_sandbox(const LocalSandbox& s) const {
  Sandbox out;
  out.id = s.id;
  out.state = s.paused ? "paused" : "ready";
  out.labels = s.labels;
  out.details = {{"path", store_.dir_of(s.id).string()},
                 {"workdir", workdir_},
                 {"network", !s.egress.empty()                  ? to_string(NetworkPolicy{NetworkPolicy::Mode::allow, s.egress})
                             : network_ && !s.no_network ? "shared"
                                                         : "none"},
                 {"createdAt", s.created_at}};
  if (!s.egress.empty()) out.egress = store_.egress_of(s.id);
  return out;
}

}  // namespace corral::local
