#include "conformance_run.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

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
  REQUIRE_MESSAGE(doc.HasMember("checks"), "no check ran: " << r.cli.out);
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

namespace {

// "contract: verified", "fork: failed"...: a record's verdicts, one line each, sorted.
std::vector<std::string> verdict_lines(const json::Document& record) {
  std::vector<std::string> lines = {"contract: " + json::get_string(record, "contract")};
  if (const json::Value* features = json::find(record, "features"))
    for (const auto& m : features->GetObject())
      lines.push_back(std::string(m.name.GetString()) + ": " + m.value.GetString());
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

ConformanceRun conformance_recorded(const CliEnv& env, const std::string& provider,
                                    const std::vector<std::string>& extra) {
  const std::filesystem::path fresh = env.root().path() / (provider + ".conformance.json");
  std::vector<std::string> args = {"--record", fresh.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  ConformanceRun r = conformance_of(env, provider, args);
  const std::string text = read_file(fresh);
  REQUIRE_MESSAGE(!text.empty(), "conformance --record wrote no record");
  const json::Document now = json::parse(text, "the fresh record");
  for (const std::string& line : verdict_lines(now)) {
    const bool shown = line.find(": verified") != std::string::npos || line.find(": not-checkable") != std::string::npos;
    CHECK_MESSAGE(shown, provider << " declares what the kit did not verify: " << line << "\n" << r.failures);
  }
  const std::filesystem::path kept = std::filesystem::path(CORRAL_RECORDS_DIR) / (provider + ".json");
  if (const char* update = std::getenv("CORRAL_UPDATE_RECORDS"); update && std::string(update) == "1") {
    std::filesystem::create_directories(kept.parent_path());
    std::filesystem::copy_file(fresh, kept, std::filesystem::copy_options::overwrite_existing);
    return r;
  }
  const std::string kept_text = read_file(kept);
  REQUIRE_MESSAGE(!kept_text.empty(), kept.string() << " is missing: run scripts/records.sh and commit it");
  CHECK_MESSAGE(verdict_lines(json::parse(kept_text, kept.string())) == verdict_lines(now),
                kept.string() << " no longer says what the kit verified now: run scripts/records.sh and commit it");
  return r;
}

}  // namespace corral::test
