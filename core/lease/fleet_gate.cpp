#include "lease/fleet_gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "base/paths.hpp"
#include "base/printable.hpp"
#include "corral/json.hpp"
#include "corral/os/atomic_file.hpp"
#include "corral/os/read_file.hpp"

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace corral {
namespace {

// How often a waiting admission looks again: a seat given back (by a process killed, too)
// is taken within this.
constexpr milliseconds kPoll(50);
// The state file is a few numbers; a larger one is damage, read as empty.
constexpr std::uint64_t kMaxStateBytes = 64 << 10;
// Remembered creates: enough for any creates-per-minute limit a provider could need.
constexpr std::size_t kMaxCreates = 4096;
// A provider's ask to wait is honoured up to this; a longer one (a day) is its quota
// speaking, which the create's own error reports.
constexpr milliseconds kMaxBackoff(std::chrono::minutes(10));

std::int64_t now_ms() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// What state.json holds: the provider's backoff, and the creates of the last minute.
struct GateState {
  std::int64_t backoff_until = 0;  // Unix ms
  std::string why;
  std::vector<std::int64_t> creates;  // Unix ms, oldest first
};

// The state as written, or empty when missing or damaged (a lost backoff costs one 429).
GateState read_state(const fs::path& file) {
  GateState state;
  try {
    std::optional<std::string> text = os::read_regular_file(file, kMaxStateBytes, "fleet state", os::Links::refuse);
    if (!text) return state;
    json::Document doc = json::parse(*text, "fleet state");
    if (!doc.IsObject()) return state;
    state.backoff_until = json::get_int(doc, "backoffUntil");
    state.why = json::get_string(doc, "why");
    if (const json::Value* creates = json::find(doc, "creates"); creates && creates->IsArray())
      for (const json::Value& at : creates->GetArray())
        if (at.IsInt64()) state.creates.push_back(at.GetInt64());
  } catch (const Error&) {
    return GateState{};
  }
  return state;
}

void write_state(const fs::path& file, const GateState& state) {
  const std::string text = json::text_of([&](json::Writer& w) {
    w.StartObject();
    w.Key("backoffUntil");
    w.Int64(state.backoff_until);
    json::write_string(w, "why", state.why);
    w.Key("creates");
    w.StartArray();
    for (std::int64_t at : state.creates) w.Int64(at);
    w.EndArray();
    w.EndObject();
  });
  // Losing it to a power loss costs at most one create too many or one 429.
  os::write_file_atomically(file, text, 0600, "fleet state", os::Durability::process_crash);
}

// A claim that keeps its sandbox alive with nobody holding it.
bool parked(const Claim& claim, std::int64_t now_s) {
  return claim.kept || claim.paused || (claim.pool && claim.pool->expires_at > now_s);
}

// Throws why a wait must end now (Ctrl-C, --timeout), if it must.
void check_wait(const GateWait& wait, const GateWaitStatus& status) {
  if (wait.cancelled && wait.cancelled())
    throw Error(ErrorCode::cancelled, fmt::format("stopped waiting for {}", slot_of(status.provider)));
  if (wait.deadline && std::chrono::steady_clock::now() >= *wait.deadline) {
    std::string why = status.reason == GateWaitStatus::Reason::limit
                          ? fmt::format("{} of {} in use", status.in_use, status.limit)
                      : status.reason == GateWaitStatus::Reason::rate ? std::string("its creates-per-minute limit")
                                                                      : fmt::format("it asked to wait: {}", status.why);
    throw Error(ErrorCode::timeout, fmt::format("--timeout ran out while waiting for {} ({})", slot_of(status.provider), why),
                "raise --timeout, stop kept sandboxes you no longer need (`corral list`), or raise the limit under "
                "'limits:' in ~/.config/corral/config.yaml");
  }
}

// True when the two statuses would read the same to the user (a count or cause changed otherwise).
bool same_news(const GateWaitStatus& a, const GateWaitStatus& b) {
  return a.reason == b.reason && a.in_use == b.in_use && a.limit == b.limit && a.why == b.why;
}

}  // namespace

std::string slot_of(const std::string& provider) {
  const bool vowel = !provider.empty() && std::string_view("aeiou").find(provider[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + provider + " slot";
}

std::string_view to_string(GateWaitStatus::Reason reason) {
  switch (reason) {
    case GateWaitStatus::Reason::limit: return "limit";
    case GateWaitStatus::Reason::rate: return "rate";
    case GateWaitStatus::Reason::backoff: return "backoff";
  }
  return "limit";
}

FleetGate::FleetGate(fs::path dir, const ClaimStore& claims, std::function<ProviderLimits(const std::string&)> limits)
    : dir_(std::move(dir)),
      claims_(claims),
      usage_(UsageLog::standard_file(claims.dir())),
      limits_(std::move(limits)) {}

fs::path FleetGate::standard_dir(const ClaimStore& claims) { return claims.dir().parent_path() / "fleet"; }

fs::path FleetGate::provider_dir(const std::string& provider) const {
  // Provider names come from loaded specs (checked names), never from a checkout.
  return dir_ / provider;
}

int FleetGate::count_seats(const fs::path& dir, bool sweep, const std::vector<std::string>& asking) const {
  const fs::path seats = dir / "seats";
  std::error_code ec;
  fs::directory_iterator it(seats, ec);
  if (ec) return 0;
  const std::int64_t now_s = now_ms() / 1000;
  int live = 0;
  for (const fs::directory_entry& entry : it) {
    const std::string id = entry.path().filename().string();
    if (std::find(asking.begin(), asking.end(), id) != asking.end()) continue;
    bool counts = false;
    if (valid_lease_id(id)) {
      if (claims_.in_use(id)) {
        counts = true;
      } else {
        try {
          std::optional<Claim> claim = claims_.read(id);
          counts = claim && parked(*claim, now_s);
        } catch (const Error&) {
          counts = false;  // a corrupt claim is `stop --orphans`' to clear, not a seat
        }
      }
    }
    if (counts) ++live;
    else if (sweep) fs::remove(entry.path(), ec);
  }
  return live;
}

void FleetGate::ended(const Claim& claim) const {
  UsageRecord r;
  r.provider = claim.provider;
  r.lease_id = claim.lease_id;
  r.slug = claim.slug;
  r.sandbox_id = claim.sandbox_id;
  r.end = now_ms() / 1000;
  r.start = parse_utc_time(claim.created_at).value_or(r.end);
  r.pooled = claim.pool.has_value();
  r.kept = claim.kept;
  usage_.append(r);
}

std::int64_t FleetGate::used_since(const std::string& provider, std::int64_t since) const {
  const std::int64_t now = now_ms() / 1000;
  auto overlap = [&](std::int64_t start, std::int64_t end) {
    return std::max<std::int64_t>(0, std::min(end, now) - std::max(start, since));
  };
  std::int64_t used = 0;
  for (const UsageRecord& r : usage_.read().records)
    if (r.provider == provider) used += overlap(r.start, r.end);
  for (const Claim& c : claims_.all())
    if (c.provider == provider) used += overlap(parse_utc_time(c.created_at).value_or(now), now);
  return used;
}

void FleetGate::check_budget(const std::string& provider, const ProviderLimits& limits) const {
  if (limits.sandbox_hours_per_day <= 0) return;
  const std::int64_t now = now_ms() / 1000;
  const std::int64_t day_start = now - now % 86400;
  const double used_hours = static_cast<double>(used_since(provider, day_start)) / 3600.0;
  if (used_hours < limits.sandbox_hours_per_day) return;
  throw Error(ErrorCode::quota,
              fmt::format("the {} budget of {:g} sandbox-hours a day is used up: {:.2f} sandbox-hours so far today "
                          "(UTC); it resets at 00:00 UTC, in {}",
                          provider, limits.sandbox_hours_per_day, used_hours,
                          format_duration((day_start + 86400 - now + 59) / 60 * 60)),
              fmt::format("stop sandboxes you no longer need (`corral list`), wait for the reset, or raise "
                          "limits.{}.sandbox-hours-per-day in ~/.config/corral/config.yaml (`corral usage --since 1d` "
                          "shows where the time went)",
                          provider));
}

int FleetGate::in_use(const std::string& provider) const { return count_seats(provider_dir(provider), false); }

void FleetGate::back_off(const std::string& provider, milliseconds wait, const std::string& why) const {
  const fs::path dir = provider_dir(provider);
  paths::make_private_folder(dir, "fleet folder of " + provider);
  os::FileLock gate = os::FileLock::acquire(dir / "gate", "the fleet gate of " + provider);
  GateState state = read_state(dir / "state.json");
  const std::int64_t until = now_ms() + std::min(wait, kMaxBackoff).count();
  if (until <= state.backoff_until) return;
  state.backoff_until = until;
  state.why = printable(why.substr(0, 300));
  write_state(dir / "state.json", state);
}

void FleetGate::admit(const std::string& provider, const std::vector<std::string>& lease_ids,
                      const GateWait& wait) const {
  const ProviderLimits limits = limits_(provider);
  const int asked = static_cast<int>(lease_ids.size());
  if (limits.sandboxes > 0 && asked > limits.sandboxes)
    throw Error(ErrorCode::quota,
                fmt::format("{} new {} sandboxes were asked for at once, and your limit is {} live at a time", asked,
                            provider, limits.sandboxes),
                fmt::format("ask for fewer, or raise limits.{}.sandboxes in ~/.config/corral/config.yaml", provider));
  if (limits.creates_per_minute > 0 && asked > limits.creates_per_minute)
    throw Error(ErrorCode::quota,
                fmt::format("{} new {} sandboxes were asked for at once, and your limit is {} created a minute",
                            asked, provider, limits.creates_per_minute),
                fmt::format("ask for fewer, or raise limits.{}.creates-per-minute in ~/.config/corral/config.yaml",
                            provider));
  const fs::path dir = provider_dir(provider);
  const fs::path state_file = dir / "state.json";
  std::optional<GateWaitStatus> told;
  auto tell = [&](const GateWaitStatus& status) {
    check_wait(wait, status);
    if (!told || !same_news(*told, status)) {
      if (wait.waiting) wait.waiting(status);
      told = status;
    }
  };
  // Once, not at every look while waiting: it reads the whole usage log.
  check_budget(provider, limits);
  for (;;) {
    // The backoff first, without the lock: every process reads it, only a 429 writes it.
    GateState state = read_state(state_file);
    std::int64_t now = now_ms();
    if (state.backoff_until > now) {
      tell({GateWaitStatus::Reason::backoff, provider, 0, limits.sandboxes, milliseconds(state.backoff_until - now),
            state.why});
      std::this_thread::sleep_for(std::min(kPoll * 2, milliseconds(state.backoff_until - now)));
      continue;
    }
    if (!limits.any()) return;

    paths::make_private_folder(dir, "fleet folder of " + provider);
    paths::make_private_folder(dir / "seats", "fleet seats of " + provider);
    GateWaitStatus status{GateWaitStatus::Reason::limit, provider, 0, limits.sandboxes, milliseconds(0), ""};
    {
      os::FileLock gate = os::FileLock::acquire(dir / "gate", "the fleet gate of " + provider,
                                                {{}, wait.cancelled ? wait.cancelled : std::function<bool()>{}});
      state = read_state(state_file);
      now = now_ms();
      std::erase_if(state.creates, [&](std::int64_t at) { return at <= now - 60'000 || at > now + 60'000; });
      bool admitted = state.backoff_until <= now;
      if (admitted && limits.sandboxes > 0) {
        status.in_use = count_seats(dir, /*sweep=*/true, lease_ids);
        admitted = status.in_use + asked <= limits.sandboxes;
      }
      if (admitted && limits.creates_per_minute > 0 &&
          static_cast<int>(state.creates.size()) + asked > limits.creates_per_minute) {
        admitted = false;
        status.reason = GateWaitStatus::Reason::rate;
        // The oldest create that must leave the window before `asked` more fit in it.
        const std::size_t must_leave = state.creates.size() + static_cast<std::size_t>(asked) -
                                       static_cast<std::size_t>(limits.creates_per_minute);
        status.left = milliseconds(state.creates[must_leave - 1] + 60'000 - now);
      }
      if (admitted) {
        for (const std::string& id : lease_ids) {
          if (limits.sandboxes > 0)
            os::write_file_atomically(dir / "seats" / id, "", 0600, "fleet seat", os::Durability::process_crash);
          if (limits.creates_per_minute > 0) state.creates.push_back(now);
        }
        if (state.creates.size() > kMaxCreates)
          state.creates.erase(state.creates.begin(), state.creates.end() - static_cast<long>(kMaxCreates));
        if (limits.creates_per_minute > 0) write_state(state_file, state);
        return;
      }
      if (state.backoff_until > now) continue;  // a 429 landed meanwhile: report that instead
    }
    tell(status);
    std::this_thread::sleep_for(status.reason == GateWaitStatus::Reason::rate
                                    ? std::clamp(status.left, milliseconds(1), kPoll * 2)
                                    : kPoll);
  }
}

}  // namespace corral
