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

}  // namespace corral::test
