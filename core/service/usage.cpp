#include "service/usage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <functional>
#include <map>
#include <set>

#include "corral/json.hpp"
#include "lease/usage_log.hpp"

namespace corral::service {
namespace {

// `unix_seconds` in UTC, as `format` (strftime's) writes it.
std::string utc_text(std::int64_t unix_seconds, const char* format) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string day_of(std::int64_t unix_seconds) { return utc_text(unix_seconds, "%Y-%m-%d"); }

// Adds up rows by key, each priced as its provider is (a row is priced only when every
// part of it is).
class Tally {
 public:
  using PriceFn = std::function<std::optional<double>(const std::string& provider)>;
  Tally(PriceFn price, UsageGrouping by) : price_(std::move(price)), by_(by) {}

  // Counts one sandbox's time from `start` to `end` within [since, now].
  void add(const std::string& provider, const std::string& lease_id, const std::string& slug, std::int64_t start,
           std::int64_t end, bool live, std::int64_t since, std::int64_t now) {
    start = std::max(start, since);
    end = std::min(end, now);
    if (end < start || (end == start && !live)) return;
    if (by_ != UsageGrouping::day) {
      const std::string key = by_ == UsageGrouping::provider ? provider : slug.empty() ? lease_id : slug;
      count(key, provider, by_ == UsageGrouping::lease ? lease_id : "", end - start, live);
      return;
    }
    // By day: each UTC day gets its part (a lease live since this very second, none).
    if (end == start) count(day_of(start), "", "", 0, live, provider);
    for (std::int64_t at = start; at < end;) {
      const std::int64_t part_end = std::min(end, at - at % 86400 + 86400);
      count(day_of(at), "", "", part_end - at, live, provider);
      at = part_end;
    }
  }

  std::vector<UsageRow> rows() && {
    std::vector<UsageRow> out;
    for (auto& [key, row] : rows_) {
      if (unpriced_.count(key)) row.cost.reset();
      out.push_back(std::move(row));
    }
    return out;
  }

 private:
  void count(const std::string& key, const std::string& provider, const std::string& lease_id, std::int64_t seconds,
             bool live, const std::string& priced_as = {}) {
    UsageRow& row = rows_[key];
    row.key = key;
    row.provider = provider;
    row.lease_id = lease_id;
    row.seconds += seconds;
    row.sandboxes += 1;
    row.live += live ? 1 : 0;
    if (std::optional<double> price = price_(priced_as.empty() ? provider : priced_as))
      row.cost = row.cost.value_or(0) + static_cast<double>(seconds) / 3600.0 * *price;
    else
      unpriced_.insert(key);
  }

  PriceFn price_;
  UsageGrouping by_;
  std::map<std::string, UsageRow> rows_;
  std::set<std::string> unpriced_;
};

}  // namespace

UsageGrouping parse_usage_grouping(const std::string& text) {
  if (text == "provider") return UsageGrouping::provider;
  if (text == "day") return UsageGrouping::day;
  if (text == "lease") return UsageGrouping::lease;
  throw Error(ErrorCode::invalid_argument, fmt::format("--by {}: sandbox-time is grouped by provider, day or lease", text),
              "e.g. `corral usage --by day`");
}

UsageReport usage(Session& session, const UsageQuery& query) {
  if (query.since_seconds <= 0)
    throw Error(ErrorCode::invalid_argument, "--since must be a positive duration", "e.g. --since 7d");
  const std::int64_t now = query.now > 0 ? query.now : static_cast<std::int64_t>(std::time(nullptr));
  UsageReport report;
  report.since = now - query.since_seconds;
  report.by = query.by;
  // A price may name a provider by an alias, as limits may; asked once per provider.
  std::map<std::string, std::optional<double>> prices;
  Tally tally(
      [&](const std::string& provider) {
        auto it = prices.find(provider);
        if (it == prices.end())
          it = prices.emplace(provider, session.config().price_per_hour(provider, session.aliases(provider))).first;
        return it->second;
      },
      query.by);
  const UsageLog::Contents log = session.fleet().usage().read();
  report.skipped = log.skipped;
  for (const UsageRecord& r : log.records)
    tally.add(r.provider, r.lease_id, r.slug, r.start, r.end, false, report.since, now);
  for (const Claim& c : session.claims().all())
    tally.add(c.provider, c.lease_id, c.slug, parse_utc_time(c.created_at).value_or(now), now, true, report.since, now);
  report.rows = std::move(tally).rows();
  for (const UsageRow& row : report.rows) report.total_seconds += row.seconds;
  return report;
}

std::string usage_to_json(const UsageReport& report) {
  static const char* const kBy[] = {"provider", "day", "lease"};
  return json::text_of([&](json::Writer& w) {
    w.StartObject();
    json::write_string(w, "since", utc_text(report.since, "%Y-%m-%dT%H:%M:%SZ"));
    json::write_string(w, "by", kBy[static_cast<int>(report.by)]);
    w.Key("rows");
    w.StartArray();
    for (const UsageRow& row : report.rows) {
      w.StartObject();
      if (report.by == UsageGrouping::day) json::write_string(w, "day", row.key);
      if (!row.provider.empty()) json::write_string(w, "provider", row.provider);
      if (report.by == UsageGrouping::lease) {
        json::write_string(w, "leaseId", row.lease_id);
        json::write_string(w, "slug", row.key);
      }
      w.Key("sandboxSeconds");
      w.Int64(row.seconds);
      w.Key("sandboxes");
      w.Int(row.sandboxes);
      w.Key("live");
      w.Int(row.live);
      if (row.cost) {
        w.Key("estimatedCost");
        w.Double(*row.cost);
      }
      w.EndObject();
    }
    w.EndArray();
    w.Key("totalSeconds");
    w.Int64(report.total_seconds);
    w.Key("skippedLines");
    w.Int(report.skipped);
    w.EndObject();
  });
}

}  // namespace corral::service
