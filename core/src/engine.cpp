#include "engine.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>

#include "exit_codes.hpp"
#include "hash.hpp"
#include "paths.hpp"
#include "slug.hpp"
#include "workspace.hpp"

namespace fs = std::filesystem;

namespace corral {
namespace {

constexpr const char* kDefaultProvider = "local";

class PhaseClock {
 public:
  // Ends the current phase (if any) and starts `phase`.
  void start(std::string phase, std::vector<PhaseTiming>& into) {
    stop(into);
    phase_ = std::move(phase);
    started_ = std::chrono::steady_clock::now();
  }
  void stop(std::vector<PhaseTiming>& into) {
    if (phase_.empty()) return;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
    into.push_back({phase_, ms.count()});
    phase_.clear();
  }

 private:
  std::string phase_;
  std::chrono::steady_clock::time_point started_;
};

StringMap owner_labels(const std::string& lease_id, const std::string& slug) {
  return {{"corral-owner", "corral"}, {"corral-lease", lease_id}, {"corral-slug", slug}};
}

// A temp file that is removed when it goes out of scope.
struct TempArchive {
  fs::path path;
  TempArchive() {
    // The archive holds the user's files: private folder, like the claims'.
    fs::path dir = paths::state_dir() / "tmp";
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
    path = dir / fmt::format("workspace-{}-{}.tar.gz", ::getpid(), random_hex(4));
  }
  ~TempArchive() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

// Marks the engine as cleaning up for as long as it lives.
class CleaningScope {
 public:
  explicit CleaningScope(bool& flag) : flag_(flag) { flag_ = true; }
  ~CleaningScope() { flag_ = false; }

 private:
  bool& flag_;
};

}  // namespace

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument:
    case ErrorCode::unsupported: return kExitUsage;
    case ErrorCode::not_found: return kExitNotFound;
    case ErrorCode::auth: return kExitAuth;
    case ErrorCode::quota: return kExitQuota;
    case ErrorCode::unavailable: return kExitUnavailable;
    case ErrorCode::timeout: return kExitTimeout;
    case ErrorCode::cancelled: return kExitCancelled;
    case ErrorCode::internal: return kExitInternal;
  }
  return kExitInternal;
}

struct Engine::Acquired {
  Claim claim;
  Sandbox sandbox;
  LeaseLock lock;
  bool reused = false;
};

Engine::Engine(const Registry& registry, const ClaimStore& claims, const Config& config, Ui& ui, EnvLookup env)
    : registry_(registry), claims_(claims), config_(config), ui_(ui), env_(std::move(env)) {}

std::string Engine::resolve_provider(const ProviderChoice& choice, std::string* from) const {
  auto said = [&](const char* source) {
    if (from) *from = source;
  };
  if (!choice.provider.empty()) {
    said("--provider");
    return choice.provider;
  }
  if (auto v = env_("CORRAL_PROVIDER"); v && !v->empty()) {
    said("CORRAL_PROVIDER");
    return *v;
  }
  std::string file;
  if (auto v = config_.provider(&file)) {
    if (from) *from = file;
    return *v;
  }
  said("default");
  return kDefaultProvider;
}

void Engine::require(const ProviderSpec& spec, Feature feature, std::string_view what) {
  if (spec.features.has(feature)) return;
  throw Error(ErrorCode::unsupported,
              fmt::format("{} needs the '{}' feature, which provider '{}' does not have", what, to_string(feature),
                          spec.name),
              fmt::format("`corral providers --feature {}` lists the providers that have it", to_string(feature)));
}

std::unique_ptr<ProviderSession> Engine::open(const std::string& name, const ProviderChoice& choice) {
  const ProviderEntry* entry = registry_.find(name);
  if (!entry) {
    if (const ProviderEntry* broken = registry_.find_broken(name))
      throw ConfigError(ErrorCode::unavailable,
                        fmt::format("provider '{}' could not be loaded: {}", name, broken->error->message),
                        "`corral providers` shows every registry entry and its status");
    std::vector<std::string> names = registry_.names();
    throw Error(ErrorCode::invalid_argument, fmt::format("unknown provider '{}'", name),
                names.empty() ? "no providers are installed; check `corral providers`"
                              : fmt::format("available providers: {}", fmt::join(names, ", ")));
  }
  const ProviderSpec& spec = entry->plugin->spec();
  StringMap flags;
  for (const auto& [key, value] : choice.option_flags) {
    size_t dot = key.find('.');
    std::string provider = key.substr(0, dot), option = key.substr(dot + 1);
    if (!spec.answers_to(provider))
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--{}-{} is an option of provider '{}', but this command uses '{}'", provider, option,
                              provider, spec.name));
    flags[option] = value;
  }
  StringMap values;
  for (auto& [option, resolved] : resolve_options(spec, flags, env_, config_)) values[option] = resolved.value;
  HostHooks hooks;
  hooks.emit = [this](int stream, std::string_view data) {
    if (stream == CORRAL_STDERR) ui_.err(data);
    else ui_.out(data);
  };
  // Cleanup runs after the Ctrl-C that caused it and must not be cut short by it.
  hooks.cancelled = [this] { return !cleaning_ && ui_.cancelled(); };
  hooks.log = [this](int level, const std::string& message) {
    if (level >= CORRAL_LOG_WARN) ui_.warn(message);
    else if (level == CORRAL_LOG_INFO) ui_.info(message);
  };
  hooks.progress = [this](const std::string& message) { ui_.progress(message); };
  return std::make_unique<ProviderSession>(entry->plugin, values, std::move(hooks));
}

std::pair<Claim, std::unique_ptr<ProviderSession>> Engine::open_lease(const std::string& id,
                                                                       const ProviderChoice& choice) {
  Claim claim = claims_.resolve(id);
  if (!choice.provider.empty()) {
    const ProviderEntry* entry = registry_.find(choice.provider);
    if (!entry || entry->plugin->spec().name != claim.provider)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("lease '{}' belongs to provider '{}', not '{}'", id, claim.provider, choice.provider),
                  "drop --provider: --id alone finds the lease's provider");
  }
  return {claim, open(claim.provider, choice)};
}

StringMap Engine::forwarded_env(const RunRequest& request) const {
  std::vector<std::string> names = config_.env_names();
  for (const std::string& n : request.env_names)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  StringMap env;
  for (const std::string& name : names) {
    if (name.empty() || name.find('=') != std::string::npos)
      throw Error(ErrorCode::invalid_argument, fmt::format("--env takes a variable name, not '{}'", name),
                  "set the variable in your environment and pass --env NAME");
    // Any installed provider's secret, not just this one's: a local run must not leak
    // the E2B key either.
    for (const ProviderEntry& entry : registry_.entries()) {
      if (!entry.ok()) continue;
      for (const OptionSpec& o : entry.plugin->spec().options)
        if (o.secret && std::find(o.env.begin(), o.env.end(), name) != o.env.end())
          throw Error(ErrorCode::invalid_argument,
                      fmt::format("refusing to forward {}: it holds provider '{}''s secret '{}'", name,
                                  entry.plugin->spec().name, o.name),
                      "pass the command its own credential under another name");
    }
    auto value = env_(name);
    if (!value)
      throw Error(ErrorCode::invalid_argument, fmt::format("--env {}: {} is not set in this environment", name, name),
                  fmt::format("export {}=... first, or drop it from --env / the config's env list", name));
    env[name] = *value;
  }
  return env;
}

Engine::Acquired Engine::acquire(const RunRequest& request, ProviderSession& session,
                                 const std::string& workspace_root, const std::string& provider) {
  Acquired a;
  if (!request.lease.empty()) {
    Claim claim = claims_.resolve(request.lease);
    a.lock = claims_.lock(
        claim.lease_id, [&] { ui_.note(fmt::format("waiting for lease {}: another corral is using it", claim.slug)); },
        [&] { return ui_.cancelled(); });
    auto fresh = claims_.read(claim.lease_id);
    if (!fresh)
      throw Error(ErrorCode::not_found, fmt::format("lease '{}' was stopped while waiting for it", request.lease));
    a.claim = *fresh;
    a.reused = true;
    a.sandbox.id = a.claim.sandbox_id;  // reconnected by the caller, once the handle exists
    return a;
  }

  std::vector<Claim> existing = claims_.all();
  a.claim.lease_id = random_hex(6);
  a.claim.slug = make_slug([&](const std::string& s) {
    return std::any_of(existing.begin(), existing.end(), [&](const Claim& c) { return c.slug == s; });
  });
  a.claim.provider = provider;
  a.claim.workspace = workspace_root;
  a.claim.created_at = now_rfc3339();
  a.lock = claims_.lock(a.claim.lease_id);
  ui_.progress(fmt::format("creating a {} sandbox", provider));
  try {
    a.sandbox = session.create({a.claim.lease_id, a.claim.slug, owner_labels(a.claim.lease_id, a.claim.slug),
                                workspace_root});
  } catch (const Error&) {
    claims_.remove(a.claim.lease_id);  // only the lock file exists so far
    throw;
  }
  a.claim.sandbox_id = a.sandbox.id;
  a.claim.details = a.sandbox.details;
  try {
    claims_.write(a.claim);
  } catch (const Error& e) {
    // An unrecorded sandbox would be a leak: remove it before reporting.
    CleaningScope cleaning(cleaning_);
    try {
      session.destroy(a.sandbox);
    } catch (const Error& destroy_error) {
      ui_.warn(fmt::format("could not remove sandbox {} after the claim failed: {}", a.sandbox.id,
                           destroy_error.what()));
    }
    claims_.remove(a.claim.lease_id);
    throw;
  }
  return a;
}

Sandbox Engine::reconnect(ProviderSession& session, const Claim& claim) {
  try {
    Sandbox live = session.get(claim.sandbox_id);
    // What create() reported stays true for the sandbox's life; a provider whose get()
    // knows less (say, an undocumented listing) must not lose it.
    for (const auto& [key, value] : claim.details) live.details.try_emplace(key, value);
    return live;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::not_found) throw;
    throw Error(ErrorCode::not_found,
                fmt::format("the sandbox of lease '{}' ({}) no longer exists at {}; it may have passed its "
                            "lifetime cap",
                            claim.slug, claim.sandbox_id, claim.provider),
                fmt::format("start a new one with `corral run --keep ...`, and forget this lease with `{}`",
                            cleanup_command(claim.provider, claim.lease_id)));
  }
}

RunResult Engine::run(const RunRequest& request) {
  RunResult result;
  std::vector<PhaseTiming> timings;
  PhaseClock clock;
  clock.start("prepare", timings);

  // Everything that can be refused is refused here, before anything is created.
  std::string provider_name;
  std::unique_ptr<ProviderSession> session;
  std::optional<Claim> reused_claim;
  if (!request.lease.empty()) {
    auto [claim, s] = open_lease(request.lease, request.choice);
    provider_name = claim.provider;
    session = std::move(s);
    reused_claim = std::move(claim);
  } else {
    provider_name = resolve_provider(request.choice);
    session = open(provider_name, request.choice);
    provider_name = session->spec().name;
  }
  const ProviderSpec& spec = session->spec();
  if (request.keep) require(spec, Feature::run_session, "--keep");
  if (request.keep_on_failure) require(spec, Feature::run_session, "--keep-on-failure");
  if (!request.lease.empty()) require(spec, Feature::run_session, "--id");
  Command command = request.command;
  command.env = forwarded_env(request);

  Workspace ws = scan_workspace(request.cwd);
  command.cwd = ws.subdir;
  const bool archive_sync = spec.features.has(Feature::archive_sync);
  if (archive_sync) check_workspace_size(ws, request.max_workspace);
  // A mounted tree cannot be swapped: running from another checkout would silently use
  // the old one (an uploading provider simply syncs the new tree).
  if (reused_claim && spec.features.has(Feature::workspace_mount) && !reused_claim->workspace.empty() &&
      reused_claim->workspace != ws.root.string())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("lease '{}' mounts {}, not this working tree ({})", reused_claim->slug,
                            reused_claim->workspace, ws.root.string()),
                fmt::format("run from {}, or start a new sandbox without --id", reused_claim->workspace));
  if (ui_.cancelled()) throw Error(ErrorCode::cancelled, "interrupted before anything was created");

  clock.start("acquire", timings);
  Acquired acquired = acquire(request, *session, ws.root.string(), provider_name);
  SessionHandle handle = handle_for(acquired.claim);
  handle.reused = acquired.reused;

  bool failed = false;
  try {
    if (acquired.reused) acquired.sandbox = reconnect(*session, acquired.claim);
    if (ui_.cancelled()) throw Error(ErrorCode::cancelled, "interrupted");
    clock.start("sync", timings);
    if (archive_sync && (!acquired.reused || acquired.claim.fingerprint != ws.fingerprint)) {
      TempArchive archive;
      ui_.progress(fmt::format("packing {} files ({})", ws.files.size(), format_size(ws.total_bytes)));
      std::uint64_t size = write_archive(ws, archive.path);
      ui_.progress(fmt::format("uploading the workspace ({})", format_size(size)));
      session->upload(acquired.sandbox, archive.path.string(), size);
      acquired.claim.fingerprint = ws.fingerprint;
      claims_.write(acquired.claim);
    } else if (archive_sync) {
      ui_.info("workspace unchanged since the last sync; not uploading");
    }
    if (ui_.cancelled()) throw Error(ErrorCode::cancelled, "interrupted");
    clock.start("exec", timings);
    ui_.progress("");
    int code = session->exec(acquired.sandbox, command);
    handle.exit_code = code;
    result.exit_code = code;
    failed = code != 0;
  } catch (const Error& e) {
    failed = true;
    result.error = e;
    result.exit_code = exit_code_for(e.code());
  } catch (const std::exception& e) {
    failed = true;
    result.error = Error(ErrorCode::internal, e.what());
    result.exit_code = kExitInternal;
  }

  clock.start("cleanup", timings);
  if (acquired.reused) {
    handle.kept = true;  // a reused lease is never stopped by `run`
  } else if (request.keep || (request.keep_on_failure && failed)) {
    handle.kept = true;
    acquired.claim.kept = true;
    try {
      claims_.write(acquired.claim);
    } catch (const Error& e) {
      ui_.warn(e.what());
    }
  } else {
    CleaningScope cleaning(cleaning_);
    try {
      session->destroy(acquired.sandbox);
      claims_.remove(acquired.claim.lease_id);
    } catch (const Error& e) {
      handle.kept = true;
      ui_.warn(fmt::format("could not stop sandbox {}: {}; stop it later with `{}`", acquired.sandbox.id, e.what(),
                           handle.cleanup_command));
    }
  }
  clock.stop(timings);
  handle.timings = std::move(timings);
  handle.error = result.error;
  result.handle = std::move(handle);
  return result;
}

SessionHandle Engine::warmup(const RunRequest& request) {
  RunRequest keep = request;
  keep.keep = true;
  std::string provider_name = resolve_provider(request.choice);
  auto session = open(provider_name, request.choice);
  require(session->spec(), Feature::run_session, "warmup");
  provider_name = session->spec().name;
  Workspace ws = scan_workspace(request.cwd);
  const bool archive_sync = session->spec().features.has(Feature::archive_sync);
  if (archive_sync) check_workspace_size(ws, request.max_workspace);
  Acquired acquired = acquire(keep, *session, ws.root.string(), provider_name);
  SessionHandle handle = handle_for(acquired.claim);
  try {
    if (archive_sync) {
      TempArchive archive;
      std::uint64_t size = write_archive(ws, archive.path);
      ui_.progress(fmt::format("uploading the workspace ({})", format_size(size)));
      session->upload(acquired.sandbox, archive.path.string(), size);
      acquired.claim.fingerprint = ws.fingerprint;
    }
    acquired.claim.kept = true;
    claims_.write(acquired.claim);
  } catch (const Error&) {
    // A warmup that could not finish leaves nothing behind.
    CleaningScope cleaning(cleaning_);
    try {
      session->destroy(acquired.sandbox);
      claims_.remove(acquired.claim.lease_id);
    } catch (const Error& e) {
      ui_.warn(fmt::format("could not stop sandbox {}: {}; stop it with `{}`", acquired.sandbox.id, e.what(),
                           handle.cleanup_command));
    }
    throw;
  }
  handle.kept = true;
  return handle;
}

void Engine::stop(const std::string& id, const ProviderChoice& choice) {
  auto [claim, session] = open_lease(id, choice);
  LeaseLock lock = claims_.lock(
      claim.lease_id, [&] { ui_.note(fmt::format("waiting for lease {}: another corral is using it", claim.slug)); },
      [&] { return ui_.cancelled(); });
  Sandbox sandbox;
  sandbox.id = claim.sandbox_id;
  sandbox.details = claim.details;
  try {
    if (session->spec().features.has(Feature::run_session)) sandbox = session->get(claim.sandbox_id);
    session->destroy(sandbox);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::not_found) throw;  // already gone: just forget it
  }
  claims_.remove(claim.lease_id);
}

}  // namespace corral
