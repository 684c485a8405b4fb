// Sandbox-time as `corral usage` sums it: the usage log's ended sandboxes and the live
// leases' time so far, within a window, grouped by provider, UTC day or lease, with an
// estimate of cost where the user's config prices a provider's sandbox-hour.
//
// Threads: usage() runs on its caller's thread; it only reads files other corrals append to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "service/session.hpp"

namespace corral::service {

enum class UsageGrouping { provider, day, lease };
// "provider", "day" or "lease"; throws invalid-argument for anything else.
UsageGrouping parse_usage_grouping(const std::string& text);

struct UsageQuery {
  std::int64_t since_seconds = 7 * 86400;  // the window: this long before now
  UsageGrouping by = UsageGrouping::provider;
  std::int64_t now = 0;                   // Unix seconds; 0 = the clock's
};

struct UsageRow {
  std::string key;       // the provider, the day ("2026-12-07") or the lease's slug
  std::string provider;  // by provider and by lease; "" by day
  std::string lease_id;  // by lease
  std::int64_t seconds = 0;  // sandbox-time within the window
  int sandboxes = 0;         // sandboxes that count towards it
  int live = 0;              // of them, alive now
  std::optional<double> cost;  // where every provider in the row has a price
};

struct UsageReport {
  std::int64_t since = 0;  // Unix seconds: the window's start
  UsageGrouping by = UsageGrouping::provider;
  std::vector<UsageRow> rows;  // by key
  std::int64_t total_seconds = 0;
  int skipped = 0;  // lines of the usage log that were no records
};

// Sums the sandbox-time of the window `query` asks for.
UsageReport usage(Session& session, const UsageQuery& query);
// The report as `corral usage --json` prints it.
std::string usage_to_json(const UsageReport& report);

}  // namespace corral::service
