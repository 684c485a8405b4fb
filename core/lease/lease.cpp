#include "lease/lease.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/phase_report.hpp"
#include "base/printable.hpp"
#include "base/sizes.hpp"
#include "corral/wire.hpp"
#include "workspace/downloads.hpp"
#include "base/hash.hpp"
#include "base/paths.hpp"
#include "workspace/staging.hpp"

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace corral {
namespace {

// The lease's lock, waiting (and saying so) while another corral holds it.
LeaseLock lock_lease(LeaseContext& ctx, const Claim& claim) {
  return ctx.claims.lock(
      claim.lease_id, [&] { ctx.ui.note(fmt::format("waiting for lease {}: another corral is using it", claim.slug)); },
      [&] { return ctx.ui.cancelled(); });
}

// The paths of the workspace, sorted as the scan sorted them.
std::vector<std::string> paths_of(const Workspace& ws) {
  std::vector<std::string> out;
  out.reserve(ws.files.size());
  for (const WorkspaceFile& f : ws.files) out.push_back(f.path);
  return out;
}

// The paths of `previous` that `current` (sorted) no longer has.
std::vector<std::string> removed_paths(std::vector<std::string> previous, const std::vector<std::string>& current) {
  std::sort(previous.begin(), previous.end());
  std::vector<std::string> removed;
  std::set_difference(previous.begin(), previous.end(), current.begin(), current.end(), std::back_inserter(removed));
  // The list came from our own state folder, but it names paths in a sandbox: keep only
  // what a workspace file list could hold.
  std::erase_if(removed, [](const std::string& p) {
    return p.empty() || p[0] == '/' || p == ".." || p.rfind("../", 0) == 0 || p.find("/../") != std::string::npos ||
           (p.size() >= 3 && p.compare(p.size() - 3, 3, "/..") == 0);
  });
  return removed;
}

// How a create waits at the fleet gate: on the progress line, as `slot-wait` phase
// events, and as long as Ctrl-C and `deadline` allow.
// `waited_since` gets the time the first wait began.
GateWait slot_wait(Ui& ui, CreateDeadline deadline, std::optional<std::chrono::steady_clock::time_point>& waited_since) {
  GateWait wait;
  wait.cancelled = [&ui] { return ui.cancelled(); };
  wait.deadline = deadline;
  wait.waiting = [&ui, &waited_since](const GateWaitStatus& s) {
    if (!waited_since) waited_since = std::chrono::steady_clock::now();
    PhaseEvent event;
    event.phase = "slot-wait";
    event.state = PhaseEvent::State::start;
    event.provider = s.provider;
    event.in_use = s.in_use;
    event.limit = s.limit;
    event.reason = std::string(to_string(s.reason));
    event.ms = s.left.count();
    ui.phase(event);
    const long seconds = static_cast<long>((s.left.count() + 999) / 1000);
    switch (s.reason) {
      case GateWaitStatus::Reason::limit:
        ui.progress(fmt::format("waiting for {}: {} of {} in use", slot_of(s.provider), s.in_use, s.limit));
        break;
      case GateWaitStatus::Reason::rate:
        ui.progress(fmt::format("waiting for {}: its creates-per-minute limit, {} s", slot_of(s.provider), seconds));
        break;
      case GateWaitStatus::Reason::backoff:
        ui.progress(fmt::format("waiting for {}: it asked corral to wait (rate limit), {} s", s.provider, seconds));
        break;
    }
  };
  return wait;
}

// Reports the end of a wait at the fleet gate that began at `since`.
void end_slot_wait(Ui& ui, const std::string& provider, std::chrono::steady_clock::time_point since,
                   PhaseEvent::State state) {
  PhaseEvent event;
  event.phase = "slot-wait";
  event.state = state;
  event.provider = provider;
  event.ms = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - since).count();
  ui.phase(event);
}


}  // namespace

void admit_new(LeaseContext& ctx, const std::string& provider, const std::vector<std::string>& lease_ids,
               CreateDeadline deadline) {
  if (!ctx.fleet) return;
  std::optional<std::chrono::steady_clock::time_point> waited_since;
  try {
    ctx.fleet->admit(provider, lease_ids, slot_wait(ctx.ui, deadline, waited_since));
  } catch (const Error&) {
    if (waited_since) end_slot_wait(ctx.ui, provider, *waited_since, PhaseEvent::State::failed);
    throw;
  }
  if (waited_since) end_slot_wait(ctx.ui, provider, *waited_since, PhaseEvent::State::done);
}

namespace {

// A sandbox of `session`'s provider made as `request` says, once the fleet gate admits it,
// asking again after the provider's "not now" (Lease::create says how long).
Sandbox create_admitted(LeaseContext& ctx, ProviderSession& session, const CreateRequest& request,
                        CreateDeadline deadline) {
  const std::string& provider = session.spec().name;
  const auto started = std::chrono::steady_clock::now();
  const auto give_up = deadline.value_or(started + kCreatePatience);
  for (int attempt = 0;; ++attempt) {
    admit_new(ctx, provider, {request.lease_id}, deadline);
    try {
      ctx.ui.progress(fmt::format("creating a {} sandbox", provider));
      PhaseReport report(ctx.ui, "create");
      Sandbox sandbox = session.create(request);
      report.done();
      return sandbox;
    } catch (const Error& e) {
      if (!ctx.fleet || e.code() != ErrorCode::quota || !e.retry_after() || ctx.ui.cancelled()) throw;
      // The provider's own ask; 1, 2, 4 ... 32 s when it named none (or zero), so it is
      // never hammered.
      const milliseconds wait = e.retry_after()->count() > 0 ? *e.retry_after()
                                                              : milliseconds(1000L << std::min(attempt, 5));
      const auto now = std::chrono::steady_clock::now();
      if (now + wait >= give_up) {
        const auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - started).count();
        if (attempt == 0) throw;
        throw Error(e.code(),
                    fmt::format("{}; corral waited and asked again {} {} over {} (every corral of yours on this "
                                "machine waited with it), until {}",
                                e.what(), attempt, attempt == 1 ? "time" : "times", format_duration(waited),
                                deadline ? "--timeout ran out" : "it had waited long enough"),
                    e.hint());
      }
      ctx.fleet->back_off(provider, wait, e.what());
    }
  }
}
}  // namespace

Lease::Lease(LeaseContext& ctx, Claim claim, std::unique_ptr<ProviderSession> session, LeaseLock lock, bool reused)
    : ctx_(&ctx), claim_(std::move(claim)), session_(std::move(session)), lock_(std::move(lock)), reused_(reused) {}
Lease::Lease(Lease&&) noexcept = default;
Lease& Lease::operator=(Lease&&) noexcept = default;
Lease::~Lease() = default;

Lease Lease::create(LeaseContext& ctx, std::unique_ptr<ProviderSession> session, CreateRequest request,
                    std::optional<PoolTag> pool, CreateDeadline deadline) {
  Claim claim;
  claim.lease_id = random_hex(6);
  SlugHold slug = ctx.claims.hold_new_slug();  // until the claim is written
  claim.slug = slug.slug();
  claim.provider = session->spec().name;
  claim.workspace = request.workspace;
  claim.created_at = now_rfc3339();
  claim.network = request.network;
  claim.pool = std::move(pool);
  claim.target = session->identity();
  // Locked before the sandbox exists: `stop --orphans` skips a lease whose lock is held,
  // so a sandbox being created right now is never taken for an orphan.
  LeaseLock lock = ctx.claims.lock(claim.lease_id);
  Sandbox sandbox;
  try {
    request.lease_id = claim.lease_id;
    request.slug = claim.slug;
    request.labels = wire::owner_labels(claim.lease_id, claim.slug, ctx.claims.host_id());
    sandbox = create_admitted(ctx, *session, request, deadline);
  } catch (const Error&) {
    ctx.claims.remove(claim.lease_id);  // only the lock file exists so far
    throw;
  }
  claim.sandbox_id = sandbox.id;
  claim.details = sandbox.details;
  // A sandbox made for one run whose provider lists corral's sandboxes needs no claim
  // that survives a power loss: `stop --orphans` finds it by its labels, claim or not.
  // Kept or pooled ones are looked up by their claim, which must survive it.
  const bool listed_anyway = request.ephemeral && !claim.pool && session->spec().features.has(Feature::cleanup);
  try {
    ctx.claims.write(claim, listed_anyway ? Durability::process_crash : Durability::power_loss);
  } catch (const Error&) {
    // An unrecorded sandbox would be a leak: remove it before reporting.
    try {
      session->destroy(sandbox);
    } catch (const Error& destroy_error) {
      ctx.ui.warn(fmt::format("could not remove sandbox {} after its claim failed: {}", sandbox.id,
                                destroy_error.what()));
    }
    ctx.claims.remove(claim.lease_id);
    throw;
  }
  Lease lease(ctx, std::move(claim), std::move(session), std::move(lock), /*reused=*/false);
  lease.sandbox_ = std::move(sandbox);
  lease.ephemeral_ = request.ephemeral;
  return lease;
}

Lease Lease::attach(LeaseContext& ctx, const std::string& id, const ProviderChoice& choice, Access access,
                    Pooled pooled) {
  Claim claim = ctx.claims.resolve(id);
  if (pooled == Pooled::refuse) require_not_pooled(claim, "--id");
  return attach(ctx, claim, choice, access);
}

void require_not_pooled(const Claim& claim, std::string_view flag) {
  if (!claim.pool) return;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("lease '{}' waits in a warm pool; it is not a kept lease to use by name", claim.slug),
              fmt::format("drop {}: a run with the pool's provider and workspace takes it from the pool (`corral pool "
                          "status` lists pools; `corral stop --id {}` removes this one)",
                          flag, claim.slug));
}

void require_lease_provider(LeaseContext& ctx, const Claim& claim, const ProviderChoice& choice,
                            std::string_view flag) {
  if (!choice.provider.empty() && ctx.providers.spec(choice.provider).name != claim.provider)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("lease '{}' belongs to provider '{}', not '{}'", claim.slug, claim.provider,
                            choice.provider),
                fmt::format("drop --provider: {} alone finds the lease's provider", flag));
}

Lease Lease::attach(LeaseContext& ctx, const Claim& claim, const ProviderChoice& choice, Access access) {
  require_lease_provider(ctx, claim, choice, "--id");
  LeaseLock lock;
  Claim current = claim;
  if (access != Access::observe) {
    lock = lock_lease(ctx, claim);
    // Another corral may have changed or stopped it while we waited.
    auto fresh = ctx.claims.read(claim.lease_id);
    if (!fresh) {
      ctx.claims.remove(claim.lease_id);  // the lock file this wait made, while it is held
      throw Error(ErrorCode::not_found, fmt::format("lease '{}' was stopped while waiting for it", claim.slug));
    }
    current = std::move(*fresh);
  }
  auto session = ctx.providers.open(current.provider, choice, ctx.ui);
  const bool shares = access == Access::run && current.kept && !current.pool &&
                      session->spec().features.has(Feature::exec_concurrent);
  LeaseLock commands;
  if (access != Access::observe)
    commands = ctx.claims.lock_commands(
        current.lease_id, shares ? os::LockMode::shared : os::LockMode::exclusive,
        [&] { ctx.ui.note(fmt::format("waiting for lease {}: a command is running in it", current.slug)); },
        [&] { return ctx.ui.cancelled(); });
  Lease lease(ctx, std::move(current), std::move(session), std::move(lock), /*reused=*/true);
  lease.commands_lock_ = std::move(commands);
  lease.shares_commands_ = shares;
  return lease;
}

Lease Lease::adopt(LeaseContext& ctx, const std::string& id, LeaseLock lock, const ProviderChoice& choice) {
  std::optional<Claim> claim = ctx.claims.read(id);
  if (!claim) throw Error(ErrorCode::not_found, fmt::format("lease '{}' is gone", id));
  require_lease_provider(ctx, *claim, choice, "--id");
  auto session = ctx.providers.open(claim->provider, choice, ctx.ui);
  return Lease(ctx, std::move(*claim), std::move(session), std::move(lock), /*reused=*/true);
}

Lease Lease::adopt_pooled(LeaseContext& ctx, Claim claim, LeaseLock lock, const ProviderChoice& choice) {
  auto session = ctx.providers.open(claim.provider, choice, ctx.ui);
  Lease lease(ctx, std::move(claim), std::move(session), std::move(lock), /*reused=*/true);
  lease.pooled_ = true;
  return lease;
}

const Sandbox& Lease::live() {
  if (sandbox_) return *sandbox_;
  if (!spec().features.has(Feature::run_session)) {
    // Without get() the claim's record is all there is.
    Sandbox s;
    s.id = claim_.sandbox_id;
    s.details = claim_.details;
    return sandbox_.emplace(std::move(s));
  }
  try {
    Sandbox s = session_->get(claim_.sandbox_id, claim_.lease_id);
    // What create() reported stays true for the sandbox's life; a provider whose get()
    // knows less (say, an undocumented listing) must not lose it.
    for (const auto& [key, value] : claim_.details) s.details.try_emplace(key, value);
    return sandbox_.emplace(std::move(s));
  } catch (const Error& e) {
    if (e.code() != ErrorCode::not_found) throw;
    throw gone(e);
  }
}

bool Lease::made_elsewhere() const { return !claim_.target.empty() && claim_.target != session_->identity(); }

Error Lease::made_elsewhere_error(std::string_view outcome, std::string_view retry) const {
  return Error(ErrorCode::config,
               fmt::format("the sandbox of lease '{}' ({}) was made through other {} settings (another account, "
                           "cluster, context or endpoint) than corral uses now, and these cannot see it; {}",
                           claim_.slug, claim_.sandbox_id, claim_.provider, outcome),
               fmt::format("switch back to the settings it was made with (the key, kubeconfig context or endpoint) "
                           "and {}; if that account is gone for good, remove {}",
                           retry.empty() ? std::string("try again") : fmt::format("run `{}` again", retry),
                           ctx_->claims.path_of(claim_.lease_id).string()));
}

Error Lease::gone(const Error& cause) const {
  // Another account cannot see it: that says nothing of whether it exists.
  if (made_elsewhere()) return made_elsewhere_error("the lease is left as it is", "");
  // The provider knows why a sandbox goes (its hint); the lease is core's to explain.
  return Error(ErrorCode::not_found,
               fmt::format("the sandbox of lease '{}' ({}) no longer exists at {}; {}", claim_.slug,
                           claim_.sandbox_id, claim_.provider,
                           cause.hint().empty() ? "it may have passed its lifetime cap, or been deleted outside corral"
                                                : cause.hint()),
               fmt::format("forget this lease with `{}`, and start a new sandbox with `corral run --keep ...`",
                           cleanup_command(claim_.provider, claim_.lease_id)));
}

void Lease::confirming_gone(const std::function<void()>& step) {
  try {
    step();
  } catch (const Error& e) {
    // A fresh lease is released by its run anyway; only a reused one outlives the error.
    if (e.code() != ErrorCode::not_found || !reused_) throw;
    std::optional<Error> confirmed;
    try {
      session_->get(claim_.sandbox_id, claim_.lease_id);
    } catch (const Error& again) {
      if (again.code() == ErrorCode::not_found) confirmed = gone(again);
    }
    if (confirmed) throw *confirmed;
    throw;
  }
}

void Lease::sync(const Workspace& ws, const std::function<bool()>& cancelled, const PackedArchive* packed) {
  if (!spec().features.has(Feature::archive_sync)) return;  // a mounted tree is always current
  Ui& ui = ctx_->ui;
  if (holds(ws)) {
    ui.info("workspace unchanged since the last sync; not uploading");
    return;
  }
  if (reused_ && claim_.ran_since_sync && claim_.fingerprint == ws.fingerprint)
    ui.info("workspace unchanged here, but a command ran in the sandbox since the last sync: sending it again, so "
            "the files it tracks are as here");
  const Sandbox& sandbox = live();
  std::vector<std::string> previous = reused_ ? ctx_->claims.synced_files(claim_.lease_id) : std::vector<std::string>{};
  std::vector<std::string> current = paths_of(ws);
  UploadRequest upload;
  upload.removed = removed_paths(previous, current);
  // Until the upload is known to be complete the sandbox may hold either tree: record
  // both, so a later sync still removes whatever of them is deleted locally.
  std::vector<std::string> either;
  std::set_union(previous.begin(), previous.end(), current.begin(), current.end(), std::back_inserter(either));
  if (!ephemeral_) ctx_->claims.write_synced_files(claim_.lease_id, either);

  std::optional<PackedArchive> own;
  if (uploads_archive(spec().features)) {
    if (!packed) packed = &own.emplace(pack_archive(ws, ui, cancelled));
    upload.archive_path = packed->path().string();
    upload.size = packed->size;
  } else {
    upload.tree_root = ws.root.string();
    upload.tree_files.reserve(ws.files.size());
    for (const WorkspaceFile& f : ws.files) upload.tree_files.push_back({f.path, f.executable, f.symlink});
    upload.size = ws.total_bytes;
  }
  ui.progress(fmt::format("uploading the workspace ({})", format_size(upload.size)));
  PhaseReport report(ui, "upload", upload.size);
  // Counted against the archive: a plugin's own total may include its request's framing.
  const TransferFn on_bytes = [&](std::uint64_t done, std::uint64_t) { report.bytes(done); };
  confirming_gone([&] { session_->upload(sandbox, upload, on_bytes); });
  report.done();
  claim_.fingerprint = ws.fingerprint;
  // Another run's command may still be changing the tree beside this one (exec-concurrent):
  // then the sandbox is not known to hold it after this sync either.
  if (!shares_commands_) claim_.ran_since_sync = false;
  claim_.workspace = ws.root.string();  // what it holds now (another tree's with --switch-tree)
  if (ephemeral_) return;  // released at the run's end: no later sync reads either
  ctx_->claims.write_synced_files(claim_.lease_id, current);
  // Losing the fingerprint to a power loss costs one upload more, not two fsyncs a run:
  // the claim as created, which is durable, stays in place.
  write_claim(Durability::process_crash);
}

ExecResult Lease::exec(const Command& command) {
  const Sandbox& sandbox = live();
  // Marked before the command starts, so a run killed half-way leaves it marked too: the
  // next sync cannot know what the command changed, and sends the tree again.
  if (!ephemeral_ && !claim_.ran_since_sync) {
    claim_.ran_since_sync = true;
    write_claim(Durability::process_crash);
  }
  // The sync and the claim's writes are done: another run may make its own while this
  // command runs, and whatever needs the lease whole still waits for the commands' lock.
  if (shares_commands_) lock_ = LeaseLock();
  ctx_->ui.progress("");
  PhaseReport report(ctx_->ui, "exec");
  ExecResult result;
  // A traced run's command continues the trace under the exec span (W3C env carrier).
  Command traced;
  const std::string traceparent = report.traceparent();
  if (!traceparent.empty()) {
    traced = command;
    traced.env["TRACEPARENT"] = traceparent;
  }
  confirming_gone([&] { result = session_->exec(sandbox, traceparent.empty() ? command : traced); });
  report.done();
  return result;
}

DownloadSummary Lease::download(const DownloadOptions& options, const std::string& cwd, const DownloadFolder& dir,
                                const std::function<bool()>& cancelled) {
  DownloadSummary summary;
  summary.dir = dir.path().string();
  Ui& ui = ctx_->ui;
  try {
    check_download_folder(dir);
    StagedArchive archive(paths::state_dir() / "tmp");
    ui.progress("downloading results");
    PhaseReport report(ui, "download");
    DownloadResult got = session_->download(
        live(), {cwd, options.patterns, archive.path().string(), options.max_bytes},
        [&](std::uint64_t done, std::uint64_t total) { report.bytes(done, total); });
    report.done();
    summary.missing = std::move(got.missing);
    // Names from the sandbox are one line each: a newline in one must not forge another.
    for (const std::string& p : summary.missing) ui.warn(fmt::format("--download '{}' matched nothing", printable(p)));
    std::error_code ec;
    std::uintmax_t size = fs::file_size(archive.path(), ec);
    if (got.size == 0 && (ec || size == 0)) return summary;  // nothing matched
    if (!ec && size > options.max_bytes)
      throw Error(ErrorCode::internal,
                  fmt::format("provider '{}' wrote a download archive past the size bound", spec().name),
                  "this is a bug in the provider plugin; report it to its authors");
    UnpackedDownload unpacked = unpack_download(archive.path(), dir, options.max_bytes, cancelled);
    summary.files = std::move(unpacked.files);
    summary.refused = std::move(unpacked.refused);
    summary.bytes = unpacked.bytes;
    for (const std::string& r : summary.refused) ui.warn(fmt::format("download entry refused: {}", printable(r)));
    ui.info(fmt::format("downloaded {} files ({}) to {}", summary.files.size(), format_size(summary.bytes),
                        summary.dir));
  } catch (const Error& e) {
    summary.error = e;
  } catch (const std::exception& e) {
    summary.error = Error(ErrorCode::internal, e.what());
  }
  return summary;
}

void Lease::keep() {
  if (claim_.kept) return;
  claim_.kept = true;
  write_claim();
}

void Lease::require_own_lock(std::string_view step) const {
  if (!lock_.held() && commands_lock_.held())
    throw Error(ErrorCode::internal, fmt::format("lease {}: {} after its lock was let go", claim_.slug, step),
                "this is a bug in corral; report it");
}

void Lease::write_claim(Durability durability) {
  require_own_lock("its claim written");
  ctx_->claims.write(claim_, durability);
}

void Lease::release() {
  require_own_lock("released");
  try {
    session_->destroy(sandbox_ ? *sandbox_ : live());
  } catch (const Error& e) {
    if (e.code() != ErrorCode::not_found) throw;
    // Already gone: just forget it; unless it was made for another account or endpoint,
    // which is where it may well live on: then the claim stays, the way to it.
    if (made_elsewhere()) throw made_elsewhere_error("the lease is kept", cleanup_command(claim_.provider, claim_.lease_id));
  }
  if (ctx_->fleet) {
    try {
      ctx_->fleet->ended(claim_);
    } catch (const Error& e) {
      ctx_->ui.warn(fmt::format("the usage log did not record lease {}: {}", claim_.slug, e.what()));
    }
  }
  ctx_->claims.remove(claim_.lease_id);
}

std::string Lease::url(int port) {
  if (port < 1 || port > 65535)
    throw Error(ErrorCode::invalid_argument, fmt::format("--port {} is not a TCP port", port), "use 1-65535");
  Providers::require(spec(), Feature::url_bridge, "corral url");
  return session_->url(live(), port);
}

Sandbox Lease::extend(std::int64_t seconds) {
  if (seconds <= 0) throw Error(ErrorCode::invalid_argument, "--by must be a positive duration", "e.g. --by 30m");
  Providers::require(spec(), Feature::keep_alive, "corral extend");
  sandbox_ = session_->extend(live(), seconds);
  return *sandbox_;
}

Sandbox Lease::pause() {
  Providers::require(spec(), Feature::pause_resume, "corral pause");
  const Sandbox& current = live();
  confirming_gone([&] { sandbox_ = session_->pause(current); });
  claim_.paused = true;
  write_claim();
  return *sandbox_;
}

Sandbox Lease::resume() {
  Providers::require(spec(), Feature::pause_resume, "corral resume");
  const Sandbox& current = live();
  PhaseReport report(ctx_->ui, "resume");
  confirming_gone([&] { sandbox_ = session_->resume(current); });
  report.done();
  if (claim_.paused) {
    claim_.paused = false;
    write_claim();
  }
  return *sandbox_;
}

bool Lease::paused() { return live().state == "paused"; }

SessionHandle Lease::handle() const {
  SessionHandle h = handle_for(claim_);
  h.reused = reused_ && !pooled_;
  h.pooled = pooled_;
  return h;
}

}  // namespace corral
