// Test support: the JSON lines `--progress json` writes on stderr, read back and checked
// against the format README.md (Progress) promises.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace corral::test::progress {

struct Event {
  std::string phase;
  std::string state;  // start, progress, done, failed
  std::uint64_t bytes = 0;
  std::uint64_t total = 0;
  bool has_bytes = false;
  long long ms = -1;
  int shard = -1;
};

struct Run {
  std::vector<Event> events;       // in the order written
  std::vector<std::string> other;  // stderr lines that are not progress objects
  // Whether `phase` started.
  bool has(const std::string& phase) const;
  // The index of the first event of `phase` in `state` (of `shard`); events.size() when none.
  size_t first(const std::string& phase, const std::string& state, int shard = -1) const;
  // The total `phase` announced at its start.
  std::uint64_t total(const std::string& phase, int shard = -1) const;
  // Its last byte count equals its total, and its done event says so too.
  bool reached_total(const std::string& phase, int shard = -1) const;
  // How many byte counts strictly between 0 and the total it reported.
  int steps(const std::string& phase, int shard = -1) const;
};

// Splits stderr into progress objects and other lines; fails the test on a line that
// starts as JSON but is not a progress object.
Run parse(const std::string& err);
// Checks each phase of each shard: starts once, then byte counts that never decrease and
// never pass the total, then ends once (done with "ms"); nothing of it after its end.
void check_well_formed(const Run& run);
// Checks a run that uploads its workspace: well formed, with pack, create, upload and exec;
// the upload after both the pack and the create (which may overlap), the command after the
// upload; pack and upload counted to their totals.
void check_upload_run(const Run& run);

}  // namespace corral::test::progress
