#include "lease/pool.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include "base/hash.hpp"
#include "base/paths.hpp"
#include "corral/os/descriptors.hpp"
#include "lease/network_policy.hpp"
#include "workspace/packed_workspace.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

// The folder of the pools' lock files and the refills' log, beside the claims.
fs::path pools_dir(const ClaimStore& claims) { return claims.dir().parent_path() / "pools"; }

// pools_dir(), made if missing; private, as the claims' folder is: the refills' log names
// workspaces and provider options.
fs::path ensure_pools_dir(const ClaimStore& claims) {
  const fs::path dir = pools_dir(claims);
  paths::make_private_folder(dir, "folder of warm pools");
  return dir;
}

// An exclusive lock on one pool's lock file, waiting for another fill of the pool;
// released when the descriptor closes (or the process dies).
LeaseLock lock_pool(const ClaimStore& claims, const std::string& key, Ui& ui) {
  return os::FileLock::acquire(ensure_pools_dir(claims) / (key + ".lock"), "pool " + key,
                               {[&ui] { ui.note("waiting for another corral filling this pool"); },
                                [&ui] { return ui.cancelled(); }});
}

// The pooled claims of pool `key`.
std::vector<Claim> pooled_claims(const ClaimStore& claims, const std::string& key) {
  std::vector<Claim> out;
  for (Claim& c : claims.all())
    if (c.pool && c.pool->key == key) out.push_back(std::move(c));
  return out;
}

// Destroys the sandbox of `lease` (gone counts as destroyed) and forgets it; a failure
// is a warning: the claim stays, for `stop --orphans`.
void discard(LeaseContext& ctx, Lease& lease, const char* why) {
  ctx.ui.info(fmt::format("pooled sandbox {} {}; removing it", lease.claim().slug, why));
  try {
    lease.release();
  } catch (const Error& e) {
    ctx.ui.warn(fmt::format("could not remove pooled sandbox {} ({}): {}", lease.claim().sandbox_id,
                            lease.claim().slug, e.what()));
  }
}

// A pooled claim locked by this process and read again under the lock.
struct LockedPooled {
  LeaseLock lock;
  Claim claim;
};

// `lease_id`'s claim, locked and read again, when it still belongs to pool `key` ("" =
// to any pool). nullopt when another process holds it (then `busy` is set) or when it is
// no longer pooled: taken by a run meanwhile, or gone (the lock file this try made is
// removed, under the lock).
std::optional<LockedPooled> lock_pooled(const ClaimStore& claims, const std::string& lease_id,
                                        const std::string& key, bool* busy = nullptr) {
  std::optional<LeaseLock> lock = claims.try_lock(lease_id);
  if (busy) *busy = !lock;
  if (!lock) return std::nullopt;
  std::optional<Claim> fresh = claims.read(lease_id);
  if (!fresh) {
    claims.remove(lease_id);
    return std::nullopt;
  }
  if (!fresh->pool || (!key.empty() && fresh->pool->key != key)) return std::nullopt;
  return LockedPooled{std::move(*lock), std::move(*fresh)};
}

// Removes the expired sandboxes of pool `key` that nobody holds.
void remove_expired(LeaseContext& ctx, const std::string& key, const ProviderChoice& choice) {
  const std::int64_t now = unix_now();
  for (const Claim& c : pooled_claims(ctx.claims, key)) {
    if (!pool_expired(*c.pool, now)) continue;
    std::optional<LockedPooled> held = lock_pooled(ctx.claims, c.lease_id, key);
    if (!held) continue;
    Lease lease = Lease::adopt_pooled(ctx, std::move(held->claim), std::move(held->lock), choice);
    discard(ctx, lease, "expired");
  }
}

// `provider`'s option flags in `choice`, as the command line gives them.
std::vector<std::string> option_flags(const ProviderSpec& spec, const ProviderChoice& choice) {
  std::vector<std::string> out;
  const std::string prefix = spec.name + ".";
  for (const auto& [key, value] : choice.option_flags) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string option = key.substr(prefix.size());
    for (const OptionSpec& o : spec.options)
      if (o.name == option && !o.secret) {
        out.push_back(spec.flag(o));
        out.push_back(value);
      }
  }
  return out;
}

constexpr off_t kMaxRefillLogBytes = 1 << 20;

// The options that name a pool of `provider`: what a session of `choice` is opened with,
// flags, environment and config alike (a template changed in corral.yaml is another
// pool), but its secrets: a key's digest has no business in file names.
StringMap keyed_options(LeaseContext& ctx, const std::string& provider, const ProviderChoice& choice) {
  StringMap values = ctx.providers.option_values(provider, choice);
  for (const OptionSpec& o : ctx.providers.spec(provider).options)
    if (o.secret) values.erase(o.name);
  return values;
}

// Starts `argv` (argv[0] the program) in `cwd` as a process of its own session, at a
// lower priority, its stdin /dev/null and its output appended to `log`, and does not wait
// for it: the intermediate child exits at once, so the process is nobody's child here and
// holds no descriptor of ours (our leases' locks included).
void spawn_detached(const std::vector<std::string>& argv, const fs::path& cwd, const fs::path& log) {
  // Everything the children use is made before the fork: they only call what is safe
  // after a fork in a process with threads.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string dir = cwd.string();
  // Opened here, never blocking: a FIFO or a symlink planted at the log is refused before
  // any child exists, instead of holding a child (and the descriptors it shares with
  // this run until its exec, our lease's lock among them) in open() for ever.
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
  struct stat st {};
  if (in < 0 || out < 0 || ::fstat(out, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string why = out < 0 ? std::strerror(errno) : "not a regular file";
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    throw Error(ErrorCode::internal, fmt::format("cannot open its log {}: {}", log.string(), why));
  }
  // Every refill appends; a log past its bound starts over rather than grow for ever.
  if (st.st_size > kMaxRefillLogBytes) (void)::ftruncate(out, 0);
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(in);
    ::close(out);
    throw Error(ErrorCode::internal, fmt::format("cannot start the pool's refill: {}", std::strerror(errno)));
  }
  if (child == 0) {
    // corral's stop handlers and signal mask are not the refill's.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0 || ::chdir(dir.c_str()) != 0) ::_exit(127);
    os::close_on_exec_from(3);
    // On a machine of few cores the refill must not slow the run that started it.
    ::setpriority(PRIO_PROCESS, 0, 10);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(in);
  ::close(out);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
}

// Starts one detached `exe pool fill` that brings `ref`'s pool back to `tag`'s size.
void start_refill(LeaseContext& ctx, const PoolRef& ref, const PoolTag& tag, const Refill& refill) {
  const ProviderSpec spec = ctx.providers.spec(ref.provider);
  std::vector<std::string> argv = {refill.exe.string(), "pool",     "fill",
                                   "--provider",  spec.name,      "--size",
                                   std::to_string(std::clamp(tag.size, 1, kMaxPoolSize)),
                                   "--pool-ttl",  std::to_string(std::max<std::int64_t>(tag.expires_at - tag.filled_at, 1)),
                                   "--network",   to_string(ref.network),
                                   "--max-workspace", std::to_string(refill.max_workspace)};
  for (std::string& flag : option_flags(spec, ref.choice)) argv.push_back(std::move(flag));
  const fs::path dir = ensure_pools_dir(ctx.claims);
  try {
    spawn_detached(argv, ref.root, dir / "refill.log");
    ctx.ui.info(fmt::format("refilling the pool in the background (log: {})", (dir / "refill.log").string()));
  } catch (const Error& e) {
    ctx.ui.warn(fmt::format("could not refill the pool: {}; run `corral pool fill` to refill it", e.what()));
  }
}

// Makes one pooled sandbox of `ref` synced with `packed` (`ws` packed; null for a provider
// that mounts the tree), tagged `tag`, paused
// where the provider can. A sandbox that cannot be made ready is destroyed again.
void make_pooled(LeaseContext& ctx, const PoolRef& ref, const PoolTag& tag, const Workspace& ws,
                 const PackedArchive* packed) {
  // Tagged in the claim create writes: a filler killed from then on leaves a sandbox
  // pooled until its expiry, then abandoned; a run that takes one never synced syncs it whole.
  Lease lease = Lease::create(ctx, ctx.providers.open(ref.provider, ref.choice, ctx.ui), ws.root.string(),
                              {.network = ref.network, .pool = tag});
  try {
    lease.sync(ws, [&ui = ctx.ui] { return ui.cancelled(); }, packed);
    if (lease.spec().features.has(Feature::pause_resume)) lease.pause();
  } catch (const Error&) {
    try {
      lease.release();
    } catch (const Error& e) {
      ctx.ui.warn(fmt::format("could not remove sandbox {} after its fill failed: {}", lease.claim().sandbox_id,
                              e.what()));
    }
    throw;
  }
}

}  // namespace

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool pool_expired(const PoolTag& tag, std::int64_t now) { return now >= tag.expires_at; }

std::string pool_key(const PoolRef& ref) {
  Sha256 h;
  h.update(ref.provider);
  for (const auto& [name, value] : ref.options)  // a std::map: sorted
    h.update(std::string(1, '\0') + name + '=' + value);
  h.update(std::string(1, '\0') + to_string(ref.network));
  h.update(std::string(1, '\0') + ref.root.string());
  // Another account or cluster is another pool: its sandboxes are not this one's to take.
  if (!ref.identity.empty()) h.update(std::string(1, '\0') + "identity=" + ref.identity);
  return h.hex().substr(0, 16);
}

FillResult fill_pool(LeaseContext& ctx, const FillRequest& request) {
  if (request.size < 1 || request.size > kMaxPoolSize)
    throw Error(ErrorCode::invalid_argument, fmt::format("--size {} is out of range", request.size),
                fmt::format("a pool holds 1 to {} sandboxes", kMaxPoolSize));
  if (request.ttl_seconds < 1)
    throw Error(ErrorCode::invalid_argument, "--pool-ttl must be a positive duration", "e.g. --pool-ttl 1h");
  PoolRef ref;
  ref.provider = ctx.providers.resolve(request.choice);
  ref.choice = request.choice;
  const ProviderSpec& spec = ctx.providers.spec(ref.provider);
  ref.provider = spec.name;
  Providers::require(spec, Feature::run_session, "corral pool fill");
  ref.options = keyed_options(ctx, ref.provider, ref.choice);
  ref.identity = ctx.providers.open(ref.provider, ref.choice, ctx.ui)->identity();
  ref.network = choose_network_policy(request.network, spec, ctx.providers.config(), ctx.ui);
  require_network_policy(spec, ref.network, ctx.providers.registry());
  // The root names the pool; the tree is scanned only once the pool is known to need a
  // sandbox: the refills of a fan-out's shards queue here and mostly find it full.
  ref.root = find_workspace_root(request.cwd);

  FillResult result;
  result.key = pool_key(ref);
  result.provider = spec.name;
  result.can_pause = spec.features.has(Feature::pause_resume);
  LeaseLock pool_lock = lock_pool(ctx.claims, result.key, ctx.ui);
  remove_expired(ctx, result.key, ref.choice);
  const std::int64_t now = unix_now();
  for (const Claim& c : pooled_claims(ctx.claims, result.key))
    if (!pool_expired(*c.pool, now)) ++result.ready_before;
  if (result.ready_before >= request.size) return result;

  auto cancelled = [&ui = ctx.ui] { return ui.cancelled(); };
  const Workspace ws = scan_workspace(request.cwd, cancelled, [&](const std::string& m) { ctx.ui.warn(m); });
  if (spec.features.has(Feature::archive_sync)) check_workspace_size(ws, request.max_workspace);
  std::optional<PackedArchive> packed;
  if (uploads_archive(spec.features)) packed.emplace(pack_archive(ws, ctx.ui, cancelled));
  PoolTag tag{result.key, request.size, now, now + request.ttl_seconds};
  for (int i = result.ready_before; i < request.size; ++i) {
    if (ctx.ui.cancelled()) throw Error(ErrorCode::cancelled, "interrupted while filling the pool");
    ctx.ui.progress(fmt::format("filling the pool: sandbox {} of {}", i + 1, request.size));
    make_pooled(ctx, ref, tag, ws, packed ? &*packed : nullptr);
    ++result.made;
  }
  return result;
}

std::optional<Lease> take_pooled(LeaseContext& ctx, const PoolRef& ref, const Refill& refill) {
  const std::string key = pool_key(ref);
  // A fill makes the pool's lock file before its first sandbox: without one, every run
  // would read every claim for nothing.
  std::error_code ec;
  if (!fs::exists(pools_dir(ctx.claims) / (key + ".lock"), ec)) return std::nullopt;
  std::vector<Claim> candidates = pooled_claims(ctx.claims, key);
  if (candidates.empty()) return std::nullopt;
  std::optional<PoolTag> seen;
  std::optional<Lease> taken;
  for (const Claim& c : candidates) {
    if (taken) break;
    seen = c.pool;
    // Busy: being filled, or another run is taking it.
    std::optional<LockedPooled> held = lock_pooled(ctx.claims, c.lease_id, key);
    if (!held) continue;
    const Claim& pooled = held->claim;
    const bool expired = pool_expired(*pooled.pool, unix_now());
    // Ours from here: a run that dies now leaves an abandoned lease, not a pooled one.
    Claim mine = pooled;
    mine.pool.reset();
    // After a power loss the run is gone too; the tag coming back then is harmless.
    ctx.claims.write(mine, Durability::process_crash);
    Lease lease = Lease::adopt_pooled(ctx, std::move(mine), std::move(held->lock), ref.choice);
    if (expired) {
      discard(ctx, lease, "expired");
      continue;
    }
    try {
      lease.live();
    } catch (const Error& e) {
      if (e.code() == ErrorCode::not_found) {
        discard(ctx, lease, "no longer exists");
        continue;
      }
      // Not reached now (a network blip, an outage): the sandbox may well be fine, so it
      // goes back to the pool for a later run, and this one makes its own. The others
      // would most likely fail alike.
      ctx.claims.write(pooled, Durability::process_crash);
      ctx.ui.warn(fmt::format("could not reach pooled sandbox {} ({}): {}; leaving it in the pool", pooled.slug,
                              pooled.sandbox_id, e.what()));
      break;
    }
    taken.emplace(std::move(lease));
  }
  if (seen && !refill.exe.empty()) start_refill(ctx, ref, *seen, refill);
  return taken;
}

std::optional<Lease> take_pooled_for(LeaseContext& ctx, const RunRequest& request, bool eligible,
                                     const std::string& provider, const NetworkPolicy& network, const fs::path& root,
                                     const std::string& identity) {
  if (!eligible || !request.use_pool || !request.lease.empty() || request.idle_given) return std::nullopt;
  try {
    PoolRef ref{provider, request.choice, keyed_options(ctx, provider, request.choice), network, root, identity};
    return take_pooled(ctx, ref, {request.refill_exe, request.max_workspace});
  } catch (const Error& e) {
    // A pool is a shortcut: a corrupt pooled claim or a lock that cannot be taken must
    // not fail a run that can make its own sandbox.
    if (e.code() == ErrorCode::cancelled) throw;
    ctx.ui.warn(fmt::format("could not take a sandbox from the pool: {}; creating one", e.what()));
    return std::nullopt;
  }
}

std::vector<PoolStatus> pool_status(LeaseContext& ctx) {
  std::map<std::pair<std::string, std::string>, PoolStatus> pools;
  const std::int64_t now = unix_now();
  for (const Claim& c : ctx.claims.all()) {
    if (!c.pool) continue;
    PoolStatus& p = pools[{c.provider, c.pool->key}];
    if (p.key.empty()) {
      p.key = c.pool->key;
      p.provider = c.provider;
      p.workspace = c.workspace;
      p.network = c.network;
      try {
        p.can_pause = ctx.providers.spec(c.provider).features.has(Feature::pause_resume);
      } catch (const Error&) {
        p.can_pause = false;  // a provider no longer installed: it cannot say
      }
    }
    p.size = std::max(p.size, c.pool->size);
    const std::int64_t age = std::max<std::int64_t>(now - c.pool->filled_at, 0);
    p.oldest_seconds = std::max(p.oldest_seconds, age);
    p.sandbox_minutes += static_cast<double>(age) / 60.0;
    if (!c.paused) p.running_minutes += static_cast<double>(age) / 60.0;
    if (ctx.claims.in_use(c.lease_id)) ++p.busy;
    else if (pool_expired(*c.pool, now)) ++p.expired;
    else ++p.ready;
  }
  std::vector<PoolStatus> out;
  for (auto& [name, status] : pools) out.push_back(std::move(status));
  return out;
}

std::vector<StopOutcome> drain_pools(LeaseContext& ctx, const std::string& provider) {
  std::vector<StopOutcome> outcomes;
  for (const Claim& c : ctx.claims.all()) {
    if (!c.pool || (!provider.empty() && c.provider != provider)) continue;
    StopOutcome out{fmt::format("pooled {} ({})", c.slug, c.provider), std::nullopt};
    bool busy = false;
    std::optional<LockedPooled> held = lock_pooled(ctx.claims, c.lease_id, "", &busy);
    if (busy) {
      out.error = Error(ErrorCode::unavailable, "being filled or taken by a run right now",
                        "drain again once it is done");
    } else if (!held) {
      continue;  // taken by a run meanwhile: not the pool's any more
    } else {
      try {
        Lease lease = Lease::adopt_pooled(ctx, std::move(held->claim), std::move(held->lock), ProviderChoice{});
        lease.release();
      } catch (const Error& e) {
        out.error = e;
      }
    }
    outcomes.push_back(std::move(out));
  }
  return outcomes;
}

}  // namespace corral
