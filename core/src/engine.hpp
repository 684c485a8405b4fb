// The run contract, implemented once for every provider: resolve and open the provider,
// pack the workspace, acquire or reuse a lease (claim first), sync, exec with streaming,
// apply the keep rules and hand back the session handle on every path.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claims.hpp"
#include "config.hpp"
#include "handle.hpp"
#include "provider_session.hpp"
#include "registry.hpp"

namespace corral {

// What the engine tells the user; the CLI writes it to the terminal, tests capture it.
class Ui {
 public:
  virtual ~Ui() = default;
  virtual void out(std::string_view data) = 0;  // the command's stdout, byte for byte
  virtual void err(std::string_view data) = 0;  // the command's stderr
  virtual void info(const std::string& message) = 0;  // shown with --verbose
  virtual void note(const std::string& message) = 0;  // always shown
  virtual void warn(const std::string& message) = 0;
  virtual void progress(const std::string& message) = 0;
  virtual bool cancelled() = 0;
};

// Selections that apply to every command that talks to a provider.
struct ProviderChoice {
  std::string provider;       // --provider; empty = env, config or the default
  StringMap option_flags;     // --<provider>-<option> values, keyed "<provider>.<option>"
};

struct RunRequest {
  ProviderChoice choice;
  std::string lease;          // --id: reuse this lease
  bool keep = false;
  bool keep_on_failure = false;
  Command command;            // argv or shell; env and cwd are filled in by the engine
  std::vector<std::string> env_names;  // --env NAME
  std::uint64_t max_workspace = 0;
  std::filesystem::path cwd;
};

struct RunResult {
  int exit_code = 0;
  std::optional<SessionHandle> handle;  // set once a sandbox was acquired
  std::optional<Error> error;
};

class Engine {
 public:
  Engine(const Registry& registry, const ClaimStore& claims, const Config& config, Ui& ui, EnvLookup env);

  // Runs a command; never throws for failures after acquisition (they are in the result).
  RunResult run(const RunRequest& request);
  // Acquires and syncs a sandbox without running anything, and keeps it.
  SessionHandle warmup(const RunRequest& request);

  // The provider to use: flag, CORRAL_PROVIDER, config, else "local"; `from` says which.
  std::string resolve_provider(const ProviderChoice& choice, std::string* from = nullptr) const;
  // Loads and opens provider `name` with its options resolved. Throws a precise error
  // for an unknown or broken provider or a bad option.
  std::unique_ptr<ProviderSession> open(const std::string& name, const ProviderChoice& choice);
  // Opens the provider that owns lease `id` (after checking --provider agrees).
  std::pair<Claim, std::unique_ptr<ProviderSession>> open_lease(const std::string& id, const ProviderChoice& choice);
  // Destroys the lease's sandbox and removes its claim.
  void stop(const std::string& id, const ProviderChoice& choice);
  // Rejects, before anything is created, a request that needs a feature `spec` lacks.
  static void require(const ProviderSpec& spec, Feature feature, std::string_view what);

 private:
  struct Acquired;
  // The allow-listed variables with their values; refuses unset names and secrets.
  StringMap forwarded_env(const RunRequest& request) const;
  // A new sandbox with its claim written, or the locked claim of the lease to reuse.
  Acquired acquire(const RunRequest& request, ProviderSession& session, const std::string& workspace_root,
                   const std::string& provider);
  // The live sandbox of a reused lease; not-found explains that it has gone and what to do.
  static Sandbox reconnect(ProviderSession& session, const Claim& claim);

  const Registry& registry_;
  const ClaimStore& claims_;
  const Config& config_;
  Ui& ui_;
  EnvLookup env_;
  bool cleaning_ = false;  // destroying after the run: plugins are not told "cancelled"
};

}  // namespace corral
