// The conformance kit: the run contract checked against one provider, through the same
// run() and Lease every command uses, so a plugin that passes behaves under corral as the
// built-in providers do. Each check exercises one promise of the contract; a check whose
// feature the provider does not advertise is skipped, never failed.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lease/claims.hpp"
#include "settings/config.hpp"
#include "plugin_host/providers.hpp"
#include "plugin_host/registry.hpp"
#include "base/ui.hpp"

namespace corral {

struct CheckResult {
  enum class Outcome { passed, failed, skipped };
  std::string id;     // stable, for --json and scripts ("output-large")
  std::string title;  // what the check proves, for people
  Outcome outcome = Outcome::passed;
  std::string detail;  // why it failed or was skipped
  std::int64_t ms = 0;
};
std::string_view to_string(CheckResult::Outcome outcome);

struct ConformanceReport {
  std::string provider;
  ProviderSpec spec;                  // what the plugin declares
  std::filesystem::path library;      // the plugin file the kit ran
  std::string plugin_version;
  std::vector<CheckResult> checks;
  int count(CheckResult::Outcome outcome) const;
  bool passed() const { return count(CheckResult::Outcome::failed) == 0; }
};

// How long a check may take before it is stopped (--check-timeout), and how long a
// plugin told to stop may go on before its helper is killed as ignoring it.
inline constexpr std::chrono::seconds kDefaultCheckTimeout{600};
inline constexpr std::chrono::seconds kConformanceCancelGrace{5};

// What the kit runs against: the user's providers, settings and claims, and the user's
// terminal for Ctrl-C.
struct ConformanceSetup {
  std::function<const Registry&()> registry;
  const Config& config;
  const ClaimStore& claims;
  Ui& user;
  ProviderChoice choice;
  std::vector<std::string> only;  // --only: run just these checks; empty = every one
  std::chrono::seconds check_timeout = kDefaultCheckTimeout;
  // --network-target IP:PORT, what the network checks try to reach; "" = a listener the
  // kit opens on this machine's 127.0.0.1 (reachable only by a sandbox on this machine).
  std::string network_target;
};

// The ids of every check, in the order they run.
std::vector<std::string> conformance_check_ids();

// Runs every check (or those `setup.only` names) against the provider `setup.choice`
// resolves to, calling `on_check` as each finishes. The plugin runs in its helper process
// with a cancel-grace of kConformanceCancelGrace, so one that crashes, hangs or ignores
// cancellation fails a check and not the kit; a check still running after
// `setup.check_timeout` is told to stop and fails. It plants a secret in this process's
// environment for the duration (a plugin that passes corral's environment on fails), and
// stops every sandbox it made before returning, whatever happened. Throws invalid-argument
// for an unknown check or network target, or when the provider cannot be opened.
ConformanceReport run_conformance(const ConformanceSetup& setup,
                                  const std::function<void(const CheckResult&)>& on_check);

// The report as one JSON object: {"provider","passed","failed","skipped","checks":[...]}.
std::string conformance_to_json(const ConformanceReport& report);
// {"provider":NAME,"error":{"code","message","hint"}}: why no check could run (the plugin
// would not load, an option was bad), for a --json reader.
std::string conformance_error_to_json(const std::string& provider, const Error& error);

}  // namespace corral
