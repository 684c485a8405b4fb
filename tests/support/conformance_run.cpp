#include "conformance_run.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include "corral/json.hpp"

namespace corral::test {

ConformanceRun conformance_of(const CliEnv& env, const std::string& provider, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"conformance", "--provider", provider, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  ConformanceRun r;
  r.cli = env.run(args);
  INFO(r.cli.err);
  REQUIRE_MESSAGE(!r.cli.out.empty(), "conformance printed no report");
  json::Document doc = json::parse(r.cli.out, "the conformance report");
  CHECK(json::get_string(doc, "provider") == provider);
  for (const auto& c : doc["checks"].GetArray()) {
    const std::string id = json::get_string(c, "id");
    const std::string outcome = json::get_string(c, "outcome");
    if (outcome == "passed") r.passed.push_back(id);
    else if (outcome == "skipped") r.skipped.push_back(id);
    else {
      r.failed.push_back(id);
      r.failures += id + ": " + json::get_string(c, "detail") + "\n";
    }
  }
  CHECK(json::get_int(doc, "failed") == static_cast<std::int64_t>(r.failed.size()));
  return r;
}

void check_passed(const ConformanceRun& run, const std::vector<std::string>& ids) {
  INFO(run.failures);
  CHECK(run.cli.exit_code == 0);
  CHECK(run.failed.empty());
  for (const std::string& id : ids)
    CHECK_MESSAGE(std::find(run.passed.begin(), run.passed.end(), id) != run.passed.end(), id);
}

}  // namespace corral::test
