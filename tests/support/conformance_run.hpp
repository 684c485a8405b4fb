// Running `corral conformance` from a test: the report parsed, every failure shown.
#pragma once

#include <string>
#include <vector>

#include "cli.hpp"

namespace corral::test {

struct ConformanceRun {
  CliResult cli;
  std::vector<std::string> passed, failed, skipped;  // check ids
  std::string failures;                              // "id: detail" lines, for messages
};

// `corral conformance --provider NAME --json` in `env`, its report parsed.
ConformanceRun conformance_of(const CliEnv& env, const std::string& provider, const std::vector<std::string>& extra = {});

// Checks that `run` exited 0 with no failed check and that each of `ids` passed (was
// neither skipped nor failed), naming the failures otherwise.
void check_passed(const ConformanceRun& run, const std::vector<std::string>& ids);

// Runs the kit as conformance_of does, writing a verification record, and holds the
// record against the one kept in the tree (docs/providers/records/PROVIDER.json), which
// the capability matrix shows: the same verdict on the run contract and on each feature,
// and no declared feature that a check covers left unverified. So every change re-shows
// what the matrix claims of a shipped plugin. CORRAL_UPDATE_RECORDS=1 writes the tree's
// record instead (scripts/records.sh).
ConformanceRun conformance_recorded(const CliEnv& env, const std::string& provider,
                                    const std::vector<std::string>& extra = {});

}  // namespace corral::test
