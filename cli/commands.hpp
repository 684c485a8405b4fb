// The `corral` subcommands. Each returns the process exit code and reports failures by
// throwing corral::Error, which main turns into a message and an exit code.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lease/claims.hpp"
#include "settings/config.hpp"
#include "lease/fanout.hpp"
#include "lease/fleet.hpp"
#include "lease/lease.hpp"
#include "plugin_host/providers.hpp"
#include "plugin_host/registry.hpp"
#include "terminal.hpp"

namespace corral::cli {

// What every command may need, built once per invocation. The registry is read on
// first use, so `version` and `--help` load no plugin.
struct Context {
  Context(bool verbose, const Config& cfg);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  const Registry& registry();
  TerminalUi ui;
  Config config;
  ClaimStore claims;
  Providers providers;
  LeaseContext leases;

 private:
  std::optional<Registry> registry_;
};

struct RunArgs {
  ProviderChoice choice;
  std::string lease;
  bool keep = false;
  bool keep_on_failure = false;
  std::string lease_output;
  std::vector<std::string> env;
  std::string timeout;
  std::string max_workspace = "512M";
  std::string shell;
  std::vector<std::string> command;
  std::vector<std::string> downloads;
  std::string download_dir;
  std::string max_download = "256M";
  std::optional<std::string> network;  // --network POLICY
  // Fan-out (fanout.hpp); shards_given says --shards was on the command line.
  bool shards_given = false;
  int shards = 0;
  bool fail_fast = false;
  int max_parallel = kDefaultMaxParallel;
  std::string shard_output;
};

int run_command(Context& ctx, const RunArgs& args);
int warmup_command(Context& ctx, const RunArgs& args);

int list_command(Context& ctx, bool json, bool remote, bool all_hosts, const ProviderChoice& choice);
int status_command(Context& ctx, const std::string& id, bool json, const ProviderChoice& choice);
struct StopArgs {
  std::string id;
  bool all = false;
  bool orphans = false;
  bool all_hosts = false;
};
int stop_command(Context& ctx, const StopArgs& args, const ProviderChoice& choice);
int url_command(Context& ctx, const std::string& id, int port, const ProviderChoice& choice);
int extend_command(Context& ctx, const std::string& id, const std::string& by, const ProviderChoice& choice);

struct ProviderFilter {
  std::vector<std::string> features;
  std::vector<std::string> kinds;
};
int providers_command(Context& ctx, bool json, const ProviderFilter& filter);
int describe_command(Context& ctx, const std::string& name, bool json);
int doctor_command(Context& ctx, const ProviderChoice& choice, bool all, bool json);
// `corral conformance`: one line per check, a summary, exit 1 when any check failed.
struct ConformanceArgs {
  ProviderChoice choice;
  bool json = false;
  std::vector<std::string> only;  // --only CHECK (repeatable)
  std::string check_timeout;      // --check-timeout DURATION; "" = the default
  std::string network_target;     // --network-target IP:PORT
};
int conformance_command(Context& ctx, const ConformanceArgs& args);

// `corral docs matrix|provider|all`: generate, write (--write) or check (--check) the
// provider docs; a stale file under --check exits 1.
struct DocsArgs {
  enum class Action { matrix, provider, all };
  Action action = Action::matrix;
  std::string format = "markdown";  // matrix: markdown | json
  std::string write;                // file to rewrite in place
  std::string check;                // file to compare with the generated text
  std::string name;                 // provider: its name or alias
  std::string dir = "docs/providers";  // all: the folder of README.md, providers.json and the pages
  bool check_all = false;           // all: check instead of write
};
int docs_command(Context& ctx, const DocsArgs& args);

}  // namespace corral::cli
