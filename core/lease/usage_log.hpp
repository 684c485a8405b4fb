// The usage log: one line per sandbox whose life corral ended (released after its run,
// stopped, drained from a pool), so sandbox-time can be summed after the leases are gone
// (`corral usage`) and a daily budget checked before the next create. Append-only JSON
// lines in $XDG_STATE_HOME/corral/usage.log; past its bound the file is moved to
// usage.log.1 (replacing the one before), so the two hold at most twice the bound.
//
// Threads and processes: append() and read() may run on several threads and processes
// at once: appends and the move are made under one lock file, and a line is written with
// one write(), so a reader sees whole lines, or a torn last one a crash left (skipped).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

struct UsageRecord {
  std::string provider;
  std::string lease_id;
  std::string slug;
  std::string sandbox_id;
  std::int64_t start = 0;  // Unix seconds: its claim's creation
  std::int64_t end = 0;    // Unix seconds: when corral ended it
  bool pooled = false;     // it ended still waiting in a warm pool (drained, expired)
  bool kept = false;       // it was a kept lease
  std::int64_t seconds() const { return end > start ? end - start : 0; }
};

// The record as one line of JSON, ending in "\n".
std::string usage_line(const UsageRecord& record);
// The record a line holds; nullopt for anything else (a torn or foreign line).
std::optional<UsageRecord> parse_usage_line(std::string_view line);
// Unix seconds of an RFC 3339 UTC time as corral writes them ("2026-12-07T04:41:40Z");
// nullopt for any other text.
std::optional<std::int64_t> parse_utc_time(const std::string& text);

class UsageLog {
 public:
  // The log at `file`, moved aside past `max_bytes`.
  explicit UsageLog(std::filesystem::path file, std::uint64_t max_bytes = 4u << 20);
  // $XDG_STATE_HOME/corral/usage.log beside `leases_dir`.
  static std::filesystem::path standard_file(const std::filesystem::path& leases_dir);
  const std::filesystem::path& file() const { return file_; }

  // Appends `record`. Throws corral::Error when the log cannot be written (the caller
  // warns: a lost record never fails what ended the sandbox).
  void append(const UsageRecord& record) const;

  struct Contents {
    std::vector<UsageRecord> records;  // the moved-aside file's, then the current one's
    int skipped = 0;                   // lines that are no record (torn, damaged, foreign)
  };
  // Every record of both files; missing files are empty. Throws corral::Error for a file
  // that cannot be read.
  Contents read() const;

 private:
  std::filesystem::path file_;
  std::uint64_t max_bytes_;
};

}  // namespace corral
