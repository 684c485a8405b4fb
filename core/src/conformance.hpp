// The conformance kit: the run contract checked against one provider, through the same
// run() and Lease every command uses, so a plugin that passes behaves under corral as the
// built-in providers do. Each check exercises one promise of the contract; a check whose
// feature the provider does not advertise is skipped, never failed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "claims.hpp"
#include "config.hpp"
#include "providers.hpp"
#include "registry.hpp"
#include "ui.hpp"

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
  std::vector<CheckResult> checks;
  int count(CheckResult::Outcome outcome) const;
  bool passed() const { return count(CheckResult::Outcome::failed) == 0; }
};

// What the kit runs against: the user's providers, settings and claims, and the user's
// terminal for Ctrl-C.
struct ConformanceSetup {
  std::function<const Registry&()> registry;
  const Config& config;
  const ClaimStore& claims;
  Ui& user;
  ProviderChoice choice;
};

// Runs every check against the provider `setup.choice` resolves to, calling `on_check`
// as each finishes. It plants a secret in this process's environment for the duration
// (a plugin that passes corral's environment on fails), and stops every sandbox it made
// before returning, whatever happened. Throws only when the provider cannot be opened.
ConformanceReport run_conformance(const ConformanceSetup& setup,
                                  const std::function<void(const CheckResult&)>& on_check);

// The report as one JSON object: {"provider","passed","failed","skipped","checks":[...]}.
std::string conformance_to_json(const ConformanceReport& report);

}  // namespace corral
