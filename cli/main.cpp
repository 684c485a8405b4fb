// corral: run a command from your working tree in a sandbox from any provider.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "corral/plugin_abi.h"
#include "corral/errors.hpp"
#include "corral/sdk/descriptors.hpp"
#include "provider_flags.hpp"
#include "workspace/workspace.hpp"

#ifndef CORRAL_VERSION
#define CORRAL_VERSION "0.0.0"
#endif

namespace corral::cli {

Context::Context(bool verbose, const Config& cfg)
    : ui(verbose),
      config(cfg),
      claims(ClaimStore::standard()),
      providers([this]() -> const Registry& { return registry(); }, config, ui, process_env),
      leases{claims, providers} {}

const Registry& Context::registry() {
  if (!registry_) registry_.emplace(Registry::load(Registry::default_sources()));
  return *registry_;
}

namespace {

// corral's own long flags, which a provider's option flag may never shadow.
const std::vector<std::string> kReservedFlags = {
    "provider", "id", "keep", "keep-on-failure", "lease-output", "env", "timeout", "max-workspace", "shell",
    "download", "download-dir", "max-download",
    "json", "verbose", "help", "port", "by", "all", "orphans", "remote", "feature", "kind", "version", "all-hosts",
    "network", "shards", "fail-fast", "max-parallel", "shard-output", "only", "check-timeout", "network-target"};

// True when the command needs neither settings nor plugins (`version`, `--help`), so it
// works whatever state the user's config or registries are in.
bool needs_nothing(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "-h" || a == "--help" || a == "--help-all") return true;
  }
  for (const std::string& a : args) {
    if (a.empty() || a[0] == '-') continue;
    return a == "version";
  }
  return args.empty();
}

int main_impl(int argc, char** argv) {
  // What the user's shell left open (`9>>file`) is not for any program corral starts.
  sdk::close_on_exec_from(3);
  install_signal_handlers();
  std::vector<std::string> args(argv + 1, argv + argc);

  bool verbose = false;
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "-v" || a == "--verbose") verbose = true;
  }
  TerminalUi early_ui(verbose);
  std::unique_ptr<Context> ctx;
  StringMap option_flags;
  const bool bare = needs_nothing(args);
  try {
    Config config = bare ? Config::from(std::nullopt, std::nullopt)
                         : Config::load(find_workspace_root(std::filesystem::current_path()));
    ctx = std::make_unique<Context>(verbose, config);
  } catch (const Error& e) {
    early_ui.error(e);
    return kExitConfig;  // a settings file corral could not use
  } catch (const std::exception& e) {
    early_ui.error(fmt::format("cannot read corral's settings: {}", e.what()),
                   "check ~/.config/corral/config.yaml and the repository's corral.yaml");
    return kExitConfig;
  }
  try {
    if (!bare) option_flags = take_provider_flags(args, ctx->registry(), kReservedFlags);
  } catch (const Error& e) {
    ctx->ui.error(e);
    return e.exit_code();
  }

  CLI::App app{"corral: run a command from your working tree in a sandbox from any provider"};
  app.name("corral");
  app.require_subcommand(1);
  app.fallthrough();  // -v works after the subcommand too
  app.add_flag("-v,--verbose", verbose, "Show what corral is doing on stderr");
  app.footer(fmt::format(
      "Provider options are flags too: --<provider>-<option> VALUE (see `corral providers describe NAME`).\n"
      "Exit status: the command's own; corral's failures use {} usage, {} not found, {} unavailable,\n"
      "{} internal, {} quota, {} auth, {} config, {} timeout, {} interrupted (docs/exit-codes.md).",
      kExitUsage, kExitNotFound, kExitUnavailable, kExitInternal, kExitQuota, kExitAuth, kExitConfig, kExitTimeout,
      kExitCancelled));

  RunArgs run;
  auto add_choice = [](CLI::App* sub, ProviderChoice& choice) {
    sub->add_option("--provider", choice.provider, "Provider to use (default: CORRAL_PROVIDER, corral.yaml, local)");
  };
  auto add_run_options = [&](CLI::App* sub) {
    add_choice(sub, run.choice);
    sub->add_option("--lease-output", run.lease_output, "Write the session handle JSON to FILE");
    sub->add_option("--env", run.env, "Forward this environment variable (repeatable)")->allow_extra_args(false);
    sub->add_option("--max-workspace", run.max_workspace, "Refuse a workspace above SIZE (0 = no limit)")
        ->capture_default_str();
    sub->add_option("--network", run.network,
                    "What the new sandbox may reach: open, none, or allow:HOST[,HOST...] (domains, IPs, CIDRs)");
  };

  CLI::App* run_cmd = app.add_subcommand("run", "Run a command in a sandbox (command after --)");
  add_run_options(run_cmd);
  run_cmd->add_option("--id", run.lease, "Reuse the kept lease with this id or slug");
  run_cmd->add_flag("--keep", run.keep, "Keep the sandbox after the run");
  run_cmd->add_flag("--keep-on-failure", run.keep_on_failure, "Keep the sandbox when the run fails");
  run_cmd->add_option("--timeout", run.timeout, "Stop the command after DURATION (e.g. 10m)");
  run_cmd->add_option("--shell", run.shell, "Run this string with /bin/sh -c instead of an argv");
  run_cmd->add_option("--download", run.downloads,
                      "After the command, copy back files matching this path or glob, relative to its folder "
                      "(repeatable; also when it fails)")
      ->allow_extra_args(false);
  run_cmd->add_option("--download-dir", run.download_dir,
                      "Where downloads land (default: .corral/runs/<lease-id>/ in the working tree)");
  run_cmd->add_option("--max-download", run.max_download, "Stop a download past SIZE")->capture_default_str();
  run_cmd->add_option("command", run.command, "The command and its arguments");
  CLI::Option* shards_opt = run_cmd->add_option(
      "--shards", run.shards,
      fmt::format("Run the command in N new sandboxes at once (1-{}); shard i gets CORRAL_SHARD_INDEX=i, "
                  "CORRAL_SHARD_COUNT=N, {{shard}} and {{shards}} replaced in the command, output lines "
                  "prefixed [i/N]",
                  kMaxShards));
  run_cmd->add_flag("--fail-fast", run.fail_fast, "With --shards: stop every shard once one fails");
  run_cmd->add_option("--max-parallel", run.max_parallel, "With --shards: create at most M sandboxes at once")
      ->capture_default_str();
  run_cmd->add_option("--shard-output", run.shard_output,
                      "With --shards: write shard i's output to DIR/shard-i.stdout and .stderr instead");

  CLI::App* warmup_cmd = app.add_subcommand("warmup", "Create and sync a sandbox and keep it; prints its handle");
  add_run_options(warmup_cmd);

  bool json = false;
  std::string id;
  ProviderChoice choice;
  StopArgs stop;
  bool all_hosts = false, remote = false;
  int port = 0;
  std::string by;

  CLI::App* list_cmd = app.add_subcommand("list", "List kept leases (or a provider's corral sandboxes)");
  list_cmd->add_flag("--json", json, "Machine-readable output");
  list_cmd->add_flag("--remote", remote, "Ask the provider for every corral-owned sandbox");
  list_cmd->add_flag("--all-hosts", all_hosts, "With --remote: also other machines' sandboxes");
  add_choice(list_cmd, choice);

  CLI::App* status_cmd = app.add_subcommand("status", "Show a lease and its sandbox's state");
  status_cmd->add_option("--id", id, "Lease id or slug")->required();
  status_cmd->add_flag("--json", json, "Machine-readable output");
  add_choice(status_cmd, choice);

  CLI::App* stop_cmd = app.add_subcommand("stop", "Stop a kept sandbox and forget its lease");
  stop_cmd->add_option("--id", stop.id, "Lease id or slug");
  stop_cmd->add_flag("--all", stop.all, "Stop every lease on this machine");
  stop_cmd->add_flag("--orphans", stop.orphans,
                     "Remove abandoned leases and the provider's sandboxes made here that no lease claims");
  stop_cmd->add_flag("--all-hosts", stop.all_hosts, "With --orphans: also other machines' sandboxes (careful)");
  add_choice(stop_cmd, choice);

  CLI::App* url_cmd = app.add_subcommand("url", "Print the URL of a port inside a kept sandbox");
  url_cmd->add_option("--id", id, "Lease id or slug")->required();
  url_cmd->add_option("--port", port, "Port inside the sandbox")->required();
  add_choice(url_cmd, choice);

  CLI::App* extend_cmd = app.add_subcommand("extend", "Extend a kept sandbox's lifetime");
  extend_cmd->add_option("--id", id, "Lease id or slug")->required();
  extend_cmd->add_option("--by", by, "How long from now (e.g. 30m, 2h)")->required();
  add_choice(extend_cmd, choice);

  bool doctor_all = false;
  CLI::App* doctor_cmd = app.add_subcommand("doctor", "Check that corral and a provider can work here");
  add_choice(doctor_cmd, choice);
  doctor_cmd->add_flag("--all", doctor_all, "Check every installed provider");
  doctor_cmd->add_flag("--json", json, "Machine-readable output");

  ConformanceArgs conformance;
  CLI::App* conformance_cmd =
      app.add_subcommand("conformance", "Check that a provider honours corral's run contract (for plugin authors)");
  add_choice(conformance_cmd, conformance.choice);
  conformance_cmd->add_flag("--json", conformance.json, "Machine-readable report");
  conformance_cmd->add_option("--only", conformance.only, "Run only this check (repeatable)")->allow_extra_args(false);
  conformance_cmd->add_option("--check-timeout", conformance.check_timeout,
                              "Stop a check still running after DURATION (default 10m)");
  conformance_cmd->add_option("--network-target", conformance.network_target,
                              "IP:PORT the network checks try to reach (default: a listener on 127.0.0.1)");
  conformance_cmd->footer(
      "Creates, uses and stops real sandboxes, and removes all of them before it exits. The plugin runs in\n"
      "its helper process: a crash, a hang or a plugin that ignores Ctrl-C fails a check, not the kit.\n"
      "Exit status: 0 when every check passed or was skipped, 1 when one failed.");

  ProviderFilter filter;
  CLI::App* providers_cmd = app.add_subcommand("providers", "List installed providers");
  providers_cmd->add_flag("--json", json, "Machine-readable output");
  providers_cmd->add_option("--feature", filter.features, "Only providers with this feature (repeatable)")
      ->allow_extra_args(false);
  providers_cmd->add_option("--kind", filter.kinds, "Only providers of this kind (repeatable)")->allow_extra_args(false);
  std::string describe_name;
  CLI::App* describe_cmd = providers_cmd->add_subcommand("describe", "Show a provider's features and settings");
  describe_cmd->add_option("name", describe_name, "Provider name or alias")->required();
  describe_cmd->add_flag("--json", json, "Machine-readable output");

  DocsArgs docs;
  CLI::App* docs_cmd = app.add_subcommand("docs", "Generate the provider docs from the plugins' specs");
  docs_cmd->require_subcommand(1);
  docs_cmd->footer("--check exits 1 with a diff when a file differs from what would be generated.");
  CLI::App* docs_matrix = docs_cmd->add_subcommand("matrix", "The capability matrix of every loaded provider");
  docs_matrix->add_option("--format", docs.format, "markdown or json")
      ->check(CLI::IsMember({"markdown", "json"}))
      ->capture_default_str();
  docs_matrix->add_option("--write", docs.write, "Rewrite the matrix block of FILE (json: all of FILE)")
      ->excludes(docs_matrix->add_option("--check", docs.check, "Fail when FILE is not what --write would make"));
  docs_matrix->callback([&] { docs.action = DocsArgs::Action::matrix; });
  CLI::App* docs_provider = docs_cmd->add_subcommand("provider", "One provider's page; hand-written text is kept");
  docs_provider->add_option("name", docs.name, "Provider name or alias")->required();
  docs_provider->add_option("--write", docs.write, "Regenerate FILE, keeping its hand-written block")
      ->excludes(docs_provider->add_option("--check", docs.check, "Fail when FILE is not what --write would make"));
  docs_provider->callback([&] { docs.action = DocsArgs::Action::provider; });
  CLI::App* docs_all = docs_cmd->add_subcommand("all", "README.md matrix, providers.json and every page in a folder");
  docs_all->add_option("--dir", docs.dir, "The folder")->capture_default_str();
  docs_all->add_flag("--check", docs.check_all, "Check every file instead of writing");
  docs_all->callback([&] { docs.action = DocsArgs::Action::all; });

  app.add_subcommand("version", "Print corral's version");

  try {
    std::reverse(args.begin(), args.end());
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }

  for (const auto& [key, _] : option_flags) {
    (void)_;
    CLI::App* used = app.get_subcommands().front();
    if (used != run_cmd && used != warmup_cmd && used != doctor_cmd && used != list_cmd && used != stop_cmd &&
        used != status_cmd && used != url_cmd && used != extend_cmd && used != conformance_cmd) {
      ctx->ui.error(fmt::format("--{} is a provider option; `corral {}` takes none",
                                key.substr(0, key.find('.')) + "-" + key.substr(key.find('.') + 1), used->get_name()));
      return kExitUsage;
    }
  }
  run.choice.option_flags = option_flags;
  run.shards_given = shards_opt->count() > 0;
  if (!run.shards_given && (run.fail_fast || !run.shard_output.empty() ||
                            run_cmd->get_option("--max-parallel")->count() > 0)) {
    ctx->ui.error("--fail-fast, --max-parallel and --shard-output only apply to a fan-out",
                  "add --shards N, e.g. `corral run --shards 4 --fail-fast -- make test`");
    return kExitUsage;
  }
  choice.option_flags = option_flags;

  try {
    Context& c = *ctx;
    if (run_cmd->parsed()) return run_command(c, run);
    if (warmup_cmd->parsed()) return warmup_command(c, run);
    if (list_cmd->parsed()) return list_command(c, json, remote, all_hosts, choice);
    if (status_cmd->parsed()) return status_command(c, id, json, choice);
    if (stop_cmd->parsed()) return stop_command(c, stop, choice);
    if (url_cmd->parsed()) return url_command(c, id, port, choice);
    if (extend_cmd->parsed()) return extend_command(c, id, by, choice);
    if (doctor_cmd->parsed()) return doctor_command(c, choice, doctor_all, json);
    if (conformance_cmd->parsed()) {
      conformance.choice.option_flags = option_flags;
      return conformance_command(c, conformance);
    }
    if (describe_cmd->parsed()) return describe_command(c, describe_name, json);
    if (providers_cmd->parsed()) return providers_command(c, json, filter);
    if (docs_cmd->parsed()) return docs_command(c, docs);
    std::cout << "corral " << CORRAL_VERSION << " (plugin ABI " << CORRAL_ABI_VERSION << ")\n";
    return 0;
  } catch (const Error& e) {
    ctx->ui.error(e);
    return e.exit_code();
  } catch (const std::exception& e) {
    ctx->ui.error(fmt::format("unexpected failure: {}", e.what()), "please report this as a bug");
    return kExitInternal;
  }
}

}  // namespace
}  // namespace corral::cli

int main(int argc, char** argv) { return corral::cli::main_impl(argc, argv); }
