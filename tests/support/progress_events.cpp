#include "progress_events.hpp"

#include <doctest/doctest.h>

#include <map>
#include <sstream>

#include "corral/json.hpp"

namespace corral::test::progress {

bool Run::has(const std::string& phase) const {
  for (const Event& e : events)
    if (e.phase == phase && e.state == "start") return true;
  return false;
}

size_t Run::first(const std::string& phase, const std::string& state, int shard) const {
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].phase == phase && events[i].state == state && events[i].shard == shard) return i;
  return events.size();
}

std::uint64_t Run::total(const std::string& phase, int shard) const {
  const size_t i = first(phase, "start", shard);
  return i < events.size() ? events[i].total : 0;
}

bool Run::reached_total(const std::string& phase, int shard) const {
  const std::uint64_t want = total(phase, shard);
  const Event* last = nullptr;
  const Event* done = nullptr;
  for (const Event& e : events) {
    if (e.phase != phase || e.shard != shard) continue;
    if (e.state == "progress") last = &e;
    if (e.state == "done") done = &e;
  }
  return want > 0 && last && last->bytes == want && done && done->bytes == want && done->total == want;
}

int Run::steps(const std::string& phase, int shard) const {
  int n = 0;
  for (const Event& e : events)
    if (e.phase == phase && e.shard == shard && e.state == "progress" && e.bytes > 0 && e.bytes < e.total) ++n;
  return n;
}

Run parse(const std::string& err) {
  Run run;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') {
      run.other.push_back(line);
      continue;
    }
    json::Document doc = json::parse(line, "a progress line");
    REQUIRE_MESSAGE(doc.IsObject(), line);
    REQUIRE_MESSAGE(doc.HasMember("phase"), line);
    REQUIRE_MESSAGE(doc.HasMember("state"), line);
    Event e;
    e.phase = doc["phase"].GetString();
    e.state = doc["state"].GetString();
    CHECK_MESSAGE((e.state == "start" || e.state == "progress" || e.state == "done" || e.state == "failed"), line);
    if (doc.HasMember("bytes")) {
      REQUIRE_MESSAGE(doc.HasMember("total"), line);
      e.has_bytes = true;
      e.bytes = doc["bytes"].GetUint64();
      e.total = doc["total"].GetUint64();
    }
    if (e.state == "progress") CHECK_MESSAGE(e.has_bytes, line);
    if (doc.HasMember("ms")) e.ms = doc["ms"].GetInt64();
    if (e.state == "done" || e.state == "failed") CHECK_MESSAGE(e.ms >= 0, line);
    if (doc.HasMember("shard")) e.shard = doc["shard"].GetInt();
    for (auto& m : doc.GetObject()) {
      const std::string key = m.name.GetString();
      CHECK_MESSAGE((key == "phase" || key == "state" || key == "bytes" || key == "total" || key == "ms" ||
                     key == "shard"),
                    "an undocumented key: " << line);
    }
    run.events.push_back(e);
  }
  return run;
}

void check_well_formed(const Run& run) {
  std::map<std::pair<std::string, int>, std::string> where;  // per phase and shard: start, moving, ended
  std::map<std::pair<std::string, int>, std::uint64_t> bytes;
  for (const Event& e : run.events) {
    const auto key = std::make_pair(e.phase, e.shard);
    std::string& at = where[key];
    INFO("phase ", e.phase, " shard ", e.shard, " state ", e.state);
    if (e.state == "start") {
      CHECK(at.empty());
      at = "started";
      continue;
    }
    CHECK(at == "started");
    if (e.has_bytes) {
      CHECK(e.bytes >= bytes[key]);
      if (e.total) CHECK(e.bytes <= e.total);
      bytes[key] = e.bytes;
    }
    if (e.state == "done" || e.state == "failed") at = "ended";
  }
  for (const auto& phase : where) CHECK_MESSAGE(phase.second == "ended", phase.first.first << " never ended");
}

void check_upload_run(const Run& run) {
  check_well_formed(run);
  for (const char* phase : {"pack", "create", "upload", "exec"}) CHECK_MESSAGE(run.has(phase), phase);
  CHECK(run.first("upload", "start") > run.first("pack", "done"));
  CHECK(run.first("upload", "start") > run.first("create", "done"));
  CHECK(run.first("exec", "start") > run.first("upload", "done"));
  CHECK(run.reached_total("pack"));
  CHECK(run.reached_total("upload"));
}

}  // namespace corral::test::progress
