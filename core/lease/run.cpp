#include "lease/run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <exception>
#include <optional>
#include <system_error>

#include "corral/sdk/printable.hpp"
#include "lease/network_policy.hpp"
#include "lease/secrets.hpp"

namespace corral {
namespace {

// What the command reached and what was refused: refusals always (they explain a failed
// download), the rest with --verbose. Names come from the sandboxed command: printable only.
void report_egress(Ui& ui, const EgressReport& egress) {
  auto line = [](const EgressDestination& d) {
    return fmt::format("{}:{} ×{}{}", sdk::printable(d.host), d.port, d.count,
                       d.reason.empty() ? "" : ": " + sdk::printable(d.reason));
  };
  for (const EgressDestination& d : egress.allowed) ui.info("egress allowed: " + line(d));
  for (const EgressDestination& d : egress.refused) ui.note("egress refused: " + line(d));
}


// The policy a new sandbox of `spec` gets (flag, configs), refused here when the
// provider cannot enforce it.
NetworkPolicy network_policy_for(LeaseContext& ctx, const ProviderSpec& spec,
                                 const std::optional<NetworkPolicy>& flag, const std::vector<Secret>& secrets) {
  NetworkPolicy policy = with_secret_hosts(choose_network_policy(flag, spec, ctx.providers.config(), ctx.ui), secrets);
  require_network_policy(spec, policy, ctx.providers.registry());
  return policy;
}

// A sandbox's policy was fixed when it was made: a --network that differs (other than
// in the order of its allow list, and the secrets' hosts it gains) is refused rather than
// silently not applied, and so are secrets for hosts it does not list.
void check_reused_network(const Claim& claim, std::optional<NetworkPolicy> flag, const std::vector<Secret>& secrets) {
  if (!secrets.empty()) {
    if (flag) flag = with_secret_hosts(*flag, secrets);
    const std::vector<std::string> outside = secret_hosts_outside(claim.network, secrets);
    if (claim.network.mode != NetworkPolicy::Mode::allow || !outside.empty())
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("lease '{}' was created with --network {}, which {}: a sandbox's network policy is "
                              "fixed when it is created",
                              claim.slug, to_string(claim.network),
                              claim.network.mode != NetworkPolicy::Mode::allow
                                  ? "is no allow list, where a secret's value could be put in"
                                  : fmt::format("does not list the secrets' host{} {}", outside.size() > 1 ? "s" : "",
                                                fmt::join(outside, ", "))),
                  "start a new sandbox with --secret (without --id): its hosts are added to its allow list");
  }
  if (!flag || (network_within(*flag, claim.network) && network_within(claim.network, *flag))) return;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("lease '{}' was created with --network {}, not {}: a sandbox's network policy is fixed "
                          "when it is created",
                          claim.slug, to_string(claim.network), to_string(*flag)),
              fmt::format("drop --network to reuse it as it is, or start a new sandbox with --network {} "
                          "(without --id)",
                          to_string(*flag)));
}

}  // namespace

RunPhases::RunPhases(LeaseContext& ctx, const RunRequest& request, Purpose purpose)
    : ctx_(ctx), request_(request), purpose_(purpose), cancelled_([&ui = ctx.ui] { return ui.cancelled(); }) {}

void RunPhases::start(const char* phase) {
  const auto now = std::chrono::steady_clock::now();
  if (phase_)
    timings_.push_back({phase_, std::chrono::duration_cast<std::chrono::milliseconds>(now - phase_start_).count()});
  phase_ = phase;
  phase_start_ = now;
  // A traced run's own steps are spans too; exec and download are the PhaseReports' spans.
  if (phase_span_) phase_span_->end(result_.error ? result_.error->what() : "");
  phase_span_.reset();
  if (phase && std::string_view(phase) != "exec" && std::string_view(phase) != "download")
    if (PhaseTracer* tracer = ctx_.ui.tracer()) phase_span_ = tracer->start(phase, -1);
}

void RunPhases::guarded(const std::function<void()>& step) {
  if (result_.error) return;
  try {
    step();
  } catch (const Error& e) {
    fail(e);
  } catch (const std::exception& e) {
    fail(Error(ErrorCode::internal, e.what()));
  }
}

void RunPhases::fail(Error error) {
  packer_.reset();  // nothing will be uploaded now: stop packing at once
  failed_ = true;
  result_.exit_code = error.exit_code();
  result_.error = std::move(error);
}

void RunPhases::stop_if_cancelled(const char* what) const {
  if (ctx_.ui.cancelled()) throw Error(ErrorCode::cancelled, what);
}

const ProviderSpec& RunPhases::spec() const {
  if (lease_) return lease_->spec();
  return reused_ ? reused_->spec() : session_->spec();
}

const Workspace& RunPhases::workspace() const { return shared_ ? shared_->workspace : *scanned_; }

// ---- prepare: everything that can be refused is refused here, before anything is created.

void RunPhases::prepare(const SharedWorkspace* shared) {
  start("prepare");
  open_provider();
  read_secrets();
  check_features();
  choose_idle();
  choose_network();
  build_command();
  take_workspace(shared);
  check_workspace();
  stop_if_cancelled("interrupted before anything was created");
  start_packing();
}

void RunPhases::open_provider() {
  if (!request_.lease.empty()) {
    if (request_.lease_lock && request_.lease_lock->held())
      reused_.emplace(Lease::adopt(ctx_, request_.lease, std::move(*request_.lease_lock), request_.choice));
    else
      reused_.emplace(Lease::attach(ctx_, request_.lease, request_.choice,
                                    request_.release_reused ? Lease::Access::exclusive : Lease::Access::run));
    // A pooled sandbox is the pool's until a run takes it from there; used by name, it
    // would stay counted as ready with this run's changes in it. attach() refuses one,
    // but the claim read under the lock has the last word.
    require_not_pooled(reused_->claim(), "--id");
  } else
    session_ = ctx_.providers.open(ctx_.providers.resolve(request_.choice), request_.choice, ctx_.ui);
}

void RunPhases::read_secrets() {
  if (purpose_ == Purpose::warmup && !request_.secrets.empty())
    throw Error(ErrorCode::invalid_argument, "--secret applies to a run: a warmup runs no command",
                "warm up with --network allow:... listing the secrets' hosts; give --secret to the run");
  const Config& config = ctx_.providers.config();
  secrets_ = parse_secret_flags(request_.secrets, ctx_.providers.env(),
                                [&config](const std::string& name) { return config.secret(name); });
  for (const Secret& secret : secrets_)
    for (const std::string& item : request_.env_names)
      if (item == secret.name || item.rfind(secret.name + "=", 0) == 0)
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("{} is both a --secret and an --env: the command would see the value", secret.name),
                    fmt::format("drop --env {}; with --secret the command sees a placeholder, which the egress "
                                "replaces with the value",
                                secret.name));
}

void RunPhases::check_features() const {
  const ProviderSpec& s = spec();
  if (!secrets_.empty())
    Providers::require(s, Feature::egress_secrets, "--secret", ctx_.providers.having(Feature::egress_secrets));
  if (purpose_ == Purpose::warmup) Providers::require(s, Feature::run_session, "warmup");
  if (request_.keep) Providers::require(s, Feature::run_session, "--keep");
  if (request_.keep_on_failure) Providers::require(s, Feature::run_session, "--keep-on-failure");
  if (reused_) Providers::require(s, Feature::run_session, "--id");
  if (request_.downloads.wanted()) {
    Providers::require(s, Feature::run_downloads, "--download");
    check_download_patterns(request_.downloads.patterns);
  }
}

bool RunPhases::may_keep() const {
  return purpose_ == Purpose::warmup || request_.keep || request_.keep_on_failure;
}

std::uint64_t RunPhases::workspace_bytes() const { return workspace_bytes_bound(workspace(), request_.max_workspace); }

void RunPhases::choose_idle() {
  if (request_.idle.empty()) return;
  const bool may_keep = this->may_keep();
  if (request_.idle_given && reused_)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("--idle applies to a new sandbox; lease '{}' keeps what it was created with",
                            reused_->claim().slug),
                "drop --idle");
  if (request_.idle_given && !may_keep)
    throw Error(ErrorCode::invalid_argument, "--idle applies to a sandbox that is kept",
                "add --keep (or --keep-on-failure), or make one with `corral warmup --idle ...`");
  if (reused_ || !may_keep) return;  // the config's default, for sandboxes it does not concern
  const ProviderSpec& s = spec();
  if (std::find(s.idle.begin(), s.idle.end(), request_.idle) == s.idle.end()) {
    if (request_.idle_given)
      throw Error(ErrorCode::unsupported,
                  fmt::format("provider '{}' cannot {} a sandbox once it is idle", s.name, request_.idle),
                  s.idle.empty() ? std::string("its sandboxes end at their lifetime; drop --idle")
                                 : fmt::format("it can: --idle {}", fmt::join(s.idle, " or --idle ")));
    ctx_.ui.info(fmt::format("provider '{}' cannot {} an idle sandbox; the config's 'idle: {}' does not apply to it",
                             s.name, request_.idle, request_.idle));
    return;
  }
  idle_ = request_.idle;
}

void RunPhases::choose_network() {
  if (!reused_) {
    network_ = network_policy_for(ctx_, spec(), request_.network, secrets_);
    return;
  }
  network_ = reused_->claim().network;
  check_reused_network(reused_->claim(), request_.network, secrets_);
}

void RunPhases::build_command() {
  command_ = request_.command;
  if (purpose_ == Purpose::warmup) return;  // nothing runs: nothing to forward
  const auto warn = [this](const std::string& m) { ctx_.ui.warn(m); };
  for (auto& [name, value] : ctx_.providers.forwarded_env(request_.env_names, warn))
    command_.env.try_emplace(name, std::move(value));
  // A secret's variable holds its placeholder, whatever the config's env list forwards.
  for (const Secret& secret : secrets_) command_.env[secret.name] = secret.placeholder;
  command_.secrets = secrets_;
  pass_stdin();
}

void RunPhases::pass_stdin() {
  if (command_.tty) {
    // A terminal whose keys could not reach the command would hold the user's one raw.
    Providers::require(spec(), Feature::exec_stdin, "-t", ctx_.providers.having(Feature::exec_stdin));
    Providers::require(spec(), Feature::exec_tty, "-t", ctx_.providers.having(Feature::exec_tty));
    command_.forward_stdin = true;
    // The command's terminal speaks what the user's does, as `docker run -t` and ssh tell it.
    command_.env.try_emplace("TERM", request_.term.empty() ? "xterm" : request_.term);
  }
  if (!command_.forward_stdin || spec().features.has(Feature::exec_stdin)) return;
  command_.forward_stdin = false;
  // Input piped in that the command would never read is refused, not dropped in silence.
  if (ctx_.ui.input_waiting())
    throw Error(ErrorCode::unsupported,
                fmt::format("provider '{}' cannot pass stdin on to the command, and input is waiting there",
                            spec().name),
                fmt::format("add --no-stdin to run it with an empty stdin, or use a provider with exec-stdin ({})",
                            fmt::join(ctx_.providers.having(Feature::exec_stdin), ", ")));
}

void RunPhases::take_workspace(const SharedWorkspace* shared) {
  shared_ = shared;
  if (!shared_)
    scanned_.emplace(scan_workspace(
        request_.cwd, cancelled_, [this](const std::string& m) { ctx_.ui.warn(m); }, request_.with_git));
  command_.cwd = workspace().subdir;
}

void RunPhases::check_workspace() const {
  const Workspace& ws = workspace();
  if (spec().features.has(Feature::archive_sync)) check_workspace_size(ws, request_.max_workspace);
  if (request_.downloads.wanted())
    check_download_folder(download_folder(ws.root, request_.cwd, request_.downloads.dir,
                                          reused_ ? reused_->claim().lease_id : std::string()));
  if (!reused_ || request_.release_reused) return;  // a fork made for this run holds its source's tree
  const Claim& claim = reused_->claim();
  if (claim.workspace.empty() || claim.workspace == ws.root.string()) return;
  // A mounted tree cannot be swapped: running from another checkout would silently use
  // the old one.
  if (spec().features.has(Feature::workspace_mount))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("lease '{}' mounts {}, not this working tree ({})", claim.slug, claim.workspace,
                            ws.root.string()),
                fmt::format("run from {}, or start a new sandbox without --id", claim.workspace));
  // An uploading provider could sync this tree over the one the sandbox holds: only when
  // asked, since the sandbox's build output and state belong to the other project.
  if (!request_.switch_tree)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("lease '{}' holds the working tree {}, not this one ({}): a run here would replace its "
                            "files with this tree's",
                            claim.slug, claim.workspace, ws.root.string()),
                fmt::format("run from {}; or pass --switch-tree to put this tree in it; or start a new sandbox "
                            "without --id",
                            claim.workspace));
}

void RunPhases::start_packing() {
  // A fan-out decided for its shards (and packed once for all of them).
  if (shared_ || !uploads_archive(spec().features)) return;
  // Lease::sync uploads nothing then. The claim was read under the lease's lock, so it
  // still says the same at sync.
  if (reused_ && reused_->holds(workspace())) return;
  ctx_.ui.progress(packing_message(workspace()));
  try {
    packer_ = std::make_unique<BackgroundPack>(workspace(), ctx_.ui, cancelled_);
  } catch (const std::system_error&) {
    // No thread to be had (a process or memory limit): sync packs in line, as before.
  }
}

PackedArchive RunPhases::take_packed() {
  std::optional<PackedArchive> packed;
  std::exception_ptr error;
  try {
    packed.emplace(packer_->take());
  } catch (...) {
    error = std::current_exception();
  }
  timings_.push_back({"pack", packer_->elapsed().count()});  // as a failed phase's time is kept
  packer_.reset();
  if (error) std::rethrow_exception(error);
  return std::move(*packed);
}

// ---- acquire, sync, exec, download

void RunPhases::acquire() {
  start("acquire");
  if (reused_) {
    lease_.emplace(std::move(*reused_));
    reused_.reset();
  } else if (std::optional<Lease> pooled = take_from_pool()) {
    lease_.emplace(std::move(*pooled));
  } else {
    // A wait for a slot, or for a provider that said "not now", counts against --timeout.
    CreateDeadline deadline;
    if (request_.command.timeout_seconds > 0)
      deadline = started_ + std::chrono::seconds(request_.command.timeout_seconds);
    lease_.emplace(Lease::create(ctx_, std::move(session_),
                                 {.workspace = workspace().root.string(),
                                  .network = network_,
                                  .idle = idle_,
                                  .ephemeral = !may_keep(),
                                  .workspace_bytes = workspace_bytes()},
                                 std::nullopt, deadline));
  }
  handle_ = lease_->handle();
  if (request_.on_acquired) request_.on_acquired(handle_);
  guarded([&] {
    lease_->live();
    resume_if_paused();
    stop_if_cancelled("interrupted");
  });
}

std::optional<Lease> RunPhases::take_from_pool() {
  // Only a command's run takes one (a warmup keeps what it makes), and only one that
  // asked for nothing a pooled sandbox was not made with: a lease by name, --idle.
  if (purpose_ != Purpose::command || !request_.use_pool || !request_.lease.empty() || request_.idle_given)
    return std::nullopt;
  try {
    return take_pooled(ctx_, pool_ref(ctx_, spec().name, request_.choice, network_, workspace().root,
                                      session_->identity()),
                       request_.refill, request_.max_workspace);
  } catch (const Error& e) {
    // A pool is a shortcut: a corrupt pooled claim or a lock that cannot be taken must
    // not fail a run that can make its own sandbox.
    if (e.code() == ErrorCode::cancelled) throw;
    ctx_.ui.warn(fmt::format("could not take a sandbox from the pool: {}; creating one", e.what()));
    return std::nullopt;
  }
}

void RunPhases::resume_if_paused() {
  if (!lease_->reused() || !lease_->spec().features.has(Feature::pause_resume) || !lease_->paused()) return;
  // A pooled sandbox waits paused by design: resuming it is news only with --verbose.
  const std::string message = fmt::format("lease {} is paused; resuming it", lease_->claim().slug);
  if (lease_->pooled()) ctx_.ui.info(message);
  else ctx_.ui.note(message);
  lease_->resume();
}

void RunPhases::sync() {
  guarded([&] {
    start("sync");
    // A pooled sandbox is known only now: one already holding this tree needs no archive,
    // so the packer is stopped rather than waited for.
    if (packer_ && lease_->holds(workspace())) packer_.reset();
    std::optional<PackedArchive> own;  // removed once uploaded
    if (packer_) own.emplace(take_packed());
    const PackedArchive* packed = own ? &*own : shared_ && shared_->archive ? &*shared_->archive : nullptr;
    lease_->sync(workspace(), cancelled_, packed);
  });
}

void RunPhases::exec() {
  guarded([&] {
    stop_if_cancelled("interrupted");
    start("exec");
    ran_ = true;
    ExecResult done = exec_on_terminal();
    ended_ = true;
    const int code = done.exit_code;
    handle_.exit_code = code;
    handle_.egress = std::move(done.egress);
    if (handle_.egress) report_egress(ctx_.ui, *handle_.egress);
    result_.exit_code = code;
    failed_ = code != 0;
    // Asked to stop while it ran, it ended by the signal it was passed (exec-signals): the
    // run is still an interrupted one, the command's own code in the handle.
    if (const int sig = ctx_.ui.stop_signal(); sig != 0)
      fail(Error(ErrorCode::cancelled,
                 fmt::format("the command was interrupted ({}) and ended by it with exit code {}",
                             stop_signal_words(sig), code)));
  });
}

ExecResult RunPhases::exec_on_terminal() {
  if (!command_.tty) return lease_->exec(command_);
  struct TerminalScope {  // the user's terminal is the command's while it runs, and no longer
    Ui& ui;
    explicit TerminalScope(Ui& u) : ui(u) { ui.command_terminal(true); }
    ~TerminalScope() { ui.command_terminal(false); }
  } terminal(ctx_.ui);
  return lease_->exec(command_);
}

void RunPhases::download() {
  // Reports matter most when the command failed: download on every outcome but a command
  // killed on Ctrl-C. One that ended by the signal it was passed (exec-signals) may have
  // written its report on the way out: that is downloaded, stopped only by a further ask.
  if (!request_.downloads.wanted() || !ran_) return;
  const int asks = ctx_.ui.stop_requests();
  if (asks > 0 && !ended_) return;
  start("download");
  DownloadFolder dir =
      download_folder(workspace().root, request_.cwd, request_.downloads.dir, lease_->claim().lease_id);
  const auto asked_again = [&ui = ctx_.ui, asks] { return ui.stop_requests() > asks; };
  DownloadSummary summary = lease_->download(request_.downloads, command_.cwd, dir, asked_again);
  if (summary.error) {
    ctx_.ui.warn(fmt::format("the download failed: {}{}", summary.error->what(),
                             summary.error->hint().empty() ? "" : " (" + summary.error->hint() + ")"));
    if (!result_.error) handle_.error = summary.error;
  }
  handle_.downloads = std::move(summary);
  // Stopped while the results came back: interrupted, whatever the command did (which
  // still decides --keep-on-failure).
  if (asked_again() && !result_.error) {
    result_.error = Error(ErrorCode::cancelled, "interrupted while downloading the results");
    result_.exit_code = result_.error->exit_code();
  }
}

// ---- cleanup: the keep rules, and the handle on every path.

RunResult RunPhases::cleanup() {
  start("cleanup");
  packer_.reset();  // still packing only when the run failed before sync: stop it
  Lease& lease = *lease_;
  if (lease.reused() && !request_.release_reused && !lease.pooled()) {
    handle_.kept = true;  // a reused lease is never stopped by `run`
  } else if (request_.keep || (request_.keep_on_failure && failed_)) {
    handle_.kept = true;
    try {
      lease.keep();
    } catch (const Error& e) {
      // The sandbox stays; only its claim still says "not kept".
      ctx_.ui.warn(fmt::format("sandbox {} is kept, but its claim could not record it: {}; `corral list` shows lease "
                               "{} as abandoned, and `corral stop --orphans` would remove it",
                               lease.claim().sandbox_id, e.what(), lease.claim().slug));
    }
  } else {
    try {
      lease.release();
    } catch (const Error& e) {
      handle_.kept = true;
      // Its claim stays "not kept": listed as abandoned, it is `stop --orphans`'s to finish.
      ctx_.ui.warn(fmt::format("could not stop sandbox {}: {}; stop it later with `{}` (or `corral stop --orphans`)",
                               lease.claim().sandbox_id, e.what(), handle_.cleanup_command));
    }
  }
  start(nullptr);
  handle_.timings = std::move(timings_);
  if (result_.error) handle_.error = result_.error;
  result_.handle = std::move(handle_);
  return std::move(result_);
}

SessionHandle RunPhases::keep_warm() {
  guarded([&] { lease_->keep(); });
  if (result_.error) {
    try {
      lease_->release();
    } catch (const Error& e) {
      ctx_.ui.warn(fmt::format("could not stop sandbox {}: {}; stop it with `{}`", lease_->claim().sandbox_id,
                               e.what(), handle_.cleanup_command));
    }
    throw *result_.error;
  }
  handle_.kept = true;
  start(nullptr);
  handle_.timings = std::move(timings_);
  return handle_;
}

RunResult run(LeaseContext& ctx, const RunRequest& request) {
  RunPhases run(ctx, request);
  run.prepare();
  run.acquire();
  run.sync();
  run.exec();
  run.download();
  return run.cleanup();
}

SessionHandle warmup(LeaseContext& ctx, const RunRequest& request) {
  RunPhases warm(ctx, request, RunPhases::Purpose::warmup);
  warm.prepare();
  warm.acquire();
  warm.sync();
  return warm.keep_warm();
}

}  // namespace corral
