#include "conformance/conformance.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>

#include "base/printable.hpp"
#include "conformance/checks/checks.hpp"
#include "corral/json.hpp"

namespace corral {

std::string_view to_string(CheckResult::Outcome outcome) {
  switch (outcome) {
    case CheckResult::Outcome::passed: return "passed";
    case CheckResult::Outcome::failed: return "failed";
    case CheckResult::Outcome::skipped: return "skipped";
  }
  return "failed";
}

int ConformanceReport::count(CheckResult::Outcome outcome) const {
  int n = 0;
  for (const CheckResult& c : checks) n += c.outcome == outcome;
  return n;
}

namespace conformance {

std::string missing_features(const CheckDef& def, const ProviderSpec& spec) {
  for (Feature f : def.needs)
    if (!spec.features.has(f)) return fmt::format("the provider does not advertise {}", to_string(f));
  if (def.needs_any.empty()) return "";
  std::vector<std::string> names;
  for (Feature f : def.needs_any) {
    if (spec.features.has(f)) return "";
    names.emplace_back(to_string(f));
  }
  return fmt::format("the provider advertises none of {}", fmt::join(names, ", "));
}

}  // namespace conformance

namespace {

using conformance::CheckContext;
using conformance::CheckDef;
using conformance::Clock;
using conformance::missing_features;

}  // namespace

std::vector<std::string> conformance_check_ids() {
  std::vector<std::string> ids;
  for (const CheckDef& def : conformance::all_checks()) ids.emplace_back(def.id);
  return ids;
}

namespace {

// Refuses (invalid-argument) a name in `only` that is no check's, listing the checks.
void check_selection(const std::vector<std::string>& only) {
  const std::vector<std::string> ids = conformance_check_ids();
  for (const std::string& name : only) {
    if (std::find(ids.begin(), ids.end(), name) != ids.end()) continue;
    // "--only a,b": one check per --only, which repeats.
    if (name.find(',') != std::string::npos) {
      std::vector<std::string> each;
      for (size_t start = 0; start <= name.size();) {
        const size_t end = std::min(name.find(',', start), name.size());
        each.push_back("--only " + name.substr(start, end - start));
        start = end + 1;
      }
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--only {}: there is no such check; --only takes one check and repeats", printable(name)),
                  fmt::format("write `{}`", printable(fmt::format("{}", fmt::join(each, " ")))));
    }
    throw Error(ErrorCode::invalid_argument, fmt::format("--only {}: there is no such check", printable(name)),
                fmt::format("the checks are: {}", fmt::join(ids, ", ")));
  }
}

// Runs the check `def` with its deadline; its result.
CheckResult run_check(const CheckDef& def, CheckContext& checks, const ConformanceSetup& setup, const ProviderSpec& spec) {
  CheckResult r{def.id, def.title};
  Clock::time_point start = Clock::now();
  if (std::string why = missing_features(def, spec); !why.empty()) {
    r.outcome = CheckResult::Outcome::skipped;
    r.detail = why;
  } else if (setup.user.cancelled()) {
    r.outcome = CheckResult::Outcome::skipped;
    r.detail = "interrupted";
  } else {
    checks.kit.begin_check(start + setup.check_timeout);
    try {
      def.body(checks);
    } catch (const conformance::CheckSkipped& e) {
      r.outcome = CheckResult::Outcome::skipped;
      r.detail = e.what();
    } catch (const conformance::CheckFailed& e) {
      r.outcome = CheckResult::Outcome::failed;
      r.detail = e.what();
    } catch (const Error& e) {
      r.outcome = CheckResult::Outcome::failed;
      r.detail = printable(e.what());
    } catch (const std::exception& e) {
      r.outcome = CheckResult::Outcome::failed;
      r.detail = fmt::format("unexpected failure: {}", printable(e.what()));
    }
    if (checks.kit.end_check()) {
      r.outcome = CheckResult::Outcome::failed;
      r.detail = fmt::format("stopped: the check was still running after {} (--check-timeout){}",
                             format_duration(setup.check_timeout.count()),
                             r.detail.empty() ? "" : "; it then said: " + r.detail);
    }
  }
  checks.stop_kept();
  r.detail = checks.planted.mask(std::move(r.detail));  // a leaked credential is named, never shown
  r.ms = conformance::ms_since(start);
  return r;
}

}  // namespace

ConformanceReport run_conformance(const ConformanceSetup& setup,
                                  const std::function<void(const CheckResult&)>& on_check) {
  check_selection(setup.only);
  ReachTarget target(setup.network_target);
  std::string provider;
  ProviderSpec spec;
  {
    CaptureUi ui(setup.user);
    Providers providers(setup.registry, setup.config, process_env);
    providers.isolate(kConformanceCancelGrace);
    provider = providers.resolve(setup.choice);
    spec = providers.spec(provider);
    providers.open(provider, setup.choice, ui);  // refuses a broken plugin or bad settings up front
  }
  ConformanceReport report;
  report.provider = spec.name;
  report.spec = spec;
  {
    const ProviderEntry& entry = setup.registry().entry(provider);
    report.library = entry.library;
    report.plugin_version = entry.plugin_version;
  }
  conformance::Fixture fixture;
  conformance::PlantedEnv planted(spec);
  conformance::Kit kit(setup, spec.name, fixture, planted);
  CheckContext checks{kit, fixture, planted, spec, target};
  for (const CheckDef& def : conformance::all_checks()) {
    if (!setup.only.empty() && std::find(setup.only.begin(), setup.only.end(), def.id) == setup.only.end()) continue;
    CheckResult r = run_check(def, checks, setup, spec);
    on_check(r);
    report.checks.push_back(std::move(r));
  }
  checks.clean_up();
  return report;
}

std::string conformance_error_to_json(const std::string& provider, const Error& error) {
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "provider", provider);
    w.Key("error");
    w.StartObject();
    json::write_string(w, "code", to_string(error.code()));
    json::write_string(w, "message", error.what());
    if (!error.hint().empty()) json::write_string(w, "hint", error.hint());
    w.EndObject();
    w.EndObject();
  }) + "\n";
}

std::string conformance_to_json(const ConformanceReport& report) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  json::write_string(w, "provider", report.provider);
  w.Key("passed");
  w.Int(report.count(CheckResult::Outcome::passed));
  w.Key("failed");
  w.Int(report.count(CheckResult::Outcome::failed));
  w.Key("skipped");
  w.Int(report.count(CheckResult::Outcome::skipped));
  w.Key("checks");
  w.StartArray();
  for (const CheckResult& c : report.checks) {
    w.StartObject();
    json::write_string(w, "id", c.id);
    json::write_string(w, "title", c.title);
    json::write_string(w, "outcome", to_string(c.outcome));
    if (!c.detail.empty()) json::write_string(w, "detail", c.detail);
    w.Key("ms");
    w.Int64(c.ms);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace corral
