// Verification records: what `corral conformance --record FILE` showed about one build of
// a plugin, feature by feature, so the capability matrix, `corral providers` and a
// plugin's users can tell a feature the kit verified from one a spec only declares. A
// record counts only for the plugin file whose sha256 it holds: a rebuilt plugin is
// unverified until the kit runs again.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "conformance/conformance.hpp"
#include "corral/types.hpp"
#include "plugin_host/registry.hpp"

namespace corral {

// What the kit showed about a feature (or the run contract every provider keeps).
enum class Verdict {
  verified,       // every check that covers it ran and passed
  failed,         // a check that covers it failed
  not_verified,   // a check that covers it was skipped or not run (--only)
  not_checkable,  // no check of this kit covers it
};
std::string_view to_string(Verdict verdict);
std::optional<Verdict> parse_verdict(std::string_view text);

struct VerificationRecord {
  std::string provider;
  std::string plugin_file;  // the file's name, no folder: a record travels with its plugin
  std::string plugin_sha256;
  std::string plugin_version;
  std::string kit_version;  // corral's version, whose kit ran
  std::string date;         // UTC, YYYY-MM-DD
  Verdict contract = Verdict::not_verified;                // the checks that need no feature
  std::vector<std::pair<std::string, Verdict>> features;   // each feature the spec declares, in its order
  std::vector<CheckResult> checks;                         // each check's outcome and detail (no timings)

  // The verdict on feature `name`; not_verified when the record does not mention it.
  Verdict verdict(std::string_view name) const;
};

// The verdict on `feature` from the checks of `report`: those that verify it (CheckDef:
// its alternatives, else its last need) among those the provider takes (it advertises
// every feature they need). A failed fork check says nothing against run-session.
Verdict feature_verdict(const ConformanceReport& report, Feature feature);
// The verdict on the run contract: the checks that need no feature.
Verdict contract_verdict(const ConformanceReport& report);

// The record of `report` on `spec`'s plugin file `library` (hashed now), of version
// `plugin_version`, by the kit of corral `kit_version`, dated today (UTC).
VerificationRecord make_record(const ConformanceReport& report, const ProviderSpec& spec,
                               const std::filesystem::path& library, const std::string& plugin_version,
                               const std::string& kit_version);

// The record as pretty-printed JSON ending with a newline.
std::string record_to_json(const VerificationRecord& record);
// The record `text` holds; throws ConfigError naming `what` and the field when malformed.
VerificationRecord parse_record(std::string_view text, const std::string& what);

// Where a plugin's record is looked for unless its registry entry names one: beside the
// plugin, "libcorral-acme.so" -> "libcorral-acme.conformance.json".
std::filesystem::path default_record_path(const std::filesystem::path& library);

// The record in `file`; nullopt when there is none. Reads at most 1 MiB of a regular file
// (a FIFO or device is refused, never waited on); throws ConfigError naming the file when
// it cannot be read or is no record.
std::optional<VerificationRecord> read_record_file(const std::filesystem::path& file);

// An installed plugin's record, when there is one and it counts; else why not.
struct Verification {
  enum class Standing { counts, missing, other_build, unreadable };
  Standing standing = Standing::missing;
  std::optional<VerificationRecord> record;  // set only when it counts: it is for this very file
  std::string why_not;  // "no verification record", "... is for another build of the plugin", the read error
};
// Reads `record_file` and holds it against `plugin_sha256`, the installed file's. Never throws.
Verification read_verification(const std::filesystem::path& record_file, const std::string& plugin_sha256);
// The same for an installed plugin: its registry's `record:`, else the default path.
Verification read_verification(const ProviderEntry& entry);

// {"counts":bool,"whyNot"?,"kit","date","contract","features":{NAME:VERDICT}}: what
// `corral providers --json` and `providers describe --json` say of a plugin's record.
std::string verification_json(const Verification& v);

// One short cell for a table: "8 of 8 checkable features (corral 0.9.0, 2026-12-06)",
// "6 of 8 checkable features, failed: fork", "no record", "record of another build", "unreadable record".
std::string verification_summary(const Verification& v, const ProviderSpec& spec);

}  // namespace corral
