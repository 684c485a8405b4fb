// The fleet gate: every corral process of this machine asks it before it makes a
// sandbox, so the user's `limits:` hold across terminals, CI jobs, fan-outs, pool
// refills and agents, and a provider's "not now" (HTTP 429) is heard by all of them, not
// only by the process that got it. There is no daemon: the state is a folder per provider,
//
//   <state>/fleet/<provider>/gate        a lock file: one admission at a time
//   <state>/fleet/<provider>/state.json  the recent creates and the provider's backoff
//   <state>/fleet/<provider>/seats/<id>  one empty file per lease admitted
//
// and a seat counts while its lease is alive by the rules the claims already keep: its
// lock is held (a corral is making or using it), or its claim is kept, paused or waiting
// in a pool. A corral that dies lets go of its lease's lock, so its seat comes back by
// itself; a seat that no longer counts is removed at the next admission.
//
// Threads: every method may run on several threads and processes at once; admissions to
// one provider are serialized by the gate's lock, held only while counting (never while
// waiting or while the provider makes the sandbox).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lease/claims.hpp"
#include "lease/usage_log.hpp"
#include "settings/config.hpp"

namespace corral {

// Why an admission waits, and for how long it has to, as told to the user.
struct GateWaitStatus {
  enum class Reason { limit, rate, backoff };
  Reason reason = Reason::limit;
  std::string provider;
  int in_use = 0;                       // live sandboxes of the provider now
  int limit = 0;                        // its `sandboxes` limit; 0 = none
  std::chrono::milliseconds left{0};    // rate and backoff: until the next try
  std::string why;                      // backoff: the provider's answer that asked for it
};
std::string_view to_string(GateWaitStatus::Reason reason);  // "limit", "rate", "backoff"
// "an e2b slot", "a local slot": how messages name a provider's slot.
std::string slot_of(const std::string& provider);

// How an admission that has to wait behaves.
struct GateWait {
  // Called when a wait starts and whenever its cause or count changes; on the caller's thread.
  std::function<void(const GateWaitStatus&)> waiting;
  std::function<bool()> cancelled;  // true ends the wait: Error(cancelled)
  // The run's --timeout: a wait past it fails with Error(timeout); nullopt = none.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

class FleetGate {
 public:
  // Keeps its folders in `dir` (made, private, on first use); reads leases from `claims`,
  // and each provider's limits from `limits(name)`. Both borrowed: they outlive the gate.
  FleetGate(std::filesystem::path dir, const ClaimStore& claims,
            std::function<ProviderLimits(const std::string& provider)> limits);
  // $XDG_STATE_HOME/corral/fleet beside `claims`' folder.
  static std::filesystem::path standard_dir(const ClaimStore& claims);

  // Waits until `provider` may make one more sandbox for each of `lease_ids` (whose locks
  // the caller holds) under its limits and any backoff a provider asked for, then gives
  // them their seats and counts the creates. Returns at once when the provider has no
  // limits and no backoff. Throws quota when more are asked at once than the limit ever
  // allows or the provider's daily budget is used up (saying how much and when it
  // resets), cancelled and timeout as `wait` says, and the claim store's errors.
  void admit(const std::string& provider, const std::vector<std::string>& lease_ids, const GateWait& wait) const;
  // Records that `provider` asked to wait `wait` before the next create (its 429): every
  // admission of the machine to it waits until then. A later, shorter ask never shortens it.
  void back_off(const std::string& provider, std::chrono::milliseconds wait, const std::string& why) const;
  // The live sandboxes of `provider` that hold seats now (for listings); removes nothing.
  int in_use(const std::string& provider) const;
  // The limits `provider` runs under.
  ProviderLimits limits(const std::string& provider) const { return limits_(provider); }
  // Records in the usage log that corral ended the sandbox of `claim` now. Throws
  // corral::Error when the log cannot be written.
  void ended(const Claim& claim) const;
  // The usage log the gate records in and reads budgets from.
  const UsageLog& usage() const { return usage_; }
  // Sandbox-seconds of `provider` since `since` (Unix seconds) up to now: the usage log's
  // records and the live leases' time so far.
  std::int64_t used_since(const std::string& provider, std::int64_t since) const;

 private:
  std::filesystem::path provider_dir(const std::string& provider) const;
  // Counts the seats of `provider` that are live, but those of `asking` (a create asked
  // again after a 429 holds its seat already); with `sweep`, removes the others (the
  // caller holds the gate).
  int count_seats(const std::filesystem::path& dir, bool sweep, const std::vector<std::string>& asking = {}) const;

  // Throws quota when `provider`'s sandbox-hours of today (UTC) reach `limits`' budget.
  void check_budget(const std::string& provider, const ProviderLimits& limits) const;

  std::filesystem::path dir_;
  const ClaimStore& claims_;
  UsageLog usage_;
  std::function<ProviderLimits(const std::string&)> limits_;
};

}  // namespace corral
