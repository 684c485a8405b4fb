// The Daytona provider's fork. Daytona forks one sandbox per call (POST /fork, a copy of
// the source's disk that then starts), so each target is one call, named after its lease:
// a fork whose answer was lost can then be found by name and deleted, and a name taken
// twice is refused rather than made twice. A fork starts with the source's labels, which
// say it is the source's lease: they are replaced by the target's at once. All forks are
// asked for first and waited for after, so they start side by side.
#include <optional>

#include "corral/sdk/remote/ownership.hpp"
#include "provider.hpp"
#include "spec.hpp"

namespace corral::daytona {
namespace {

// True for a failure that concerns one fork (the organization's limits, Daytona's
// trouble, a time limit): that fork becomes an error entry and the others go on. Any
// other (the key, the source gone, Ctrl-C) ends the whole call.
bool per_fork(const Error& e) {
  return e.code() == ErrorCode::quota || e.code() == ErrorCode::unavailable || e.code() == ErrorCode::timeout;
}

// The fork's Daytona name: unique per lease, so it can be looked up when its answer is lost.
std::string fork_name(const ForkTarget& target) {
  return target.lease_id.empty() ? "" : "corral-" + target.lease_id;
}

}  // namespace

void DaytonaProvider::discard_fork(const std::string& id_or_name, const sdk::Host& host) {
  try {
    control_.remove(id_or_name);
  } catch (const Error& e) {
    host.warn("could not delete Daytona fork " + id_or_name + " (" + e.what() +
              "); remove it with `corral stop --orphans --provider " + identity().settings.provider() + "`");
  }
  live_.erase(id_or_name);
}

std::vector<ForkOutcome> DaytonaProvider::fork(const Sandbox& source, const std::vector<ForkTarget>& targets,
                                               const sdk::Host& host) {
  check_sandbox_id(source.id);
  std::vector<ForkOutcome> outcomes(targets.size());
  std::vector<std::optional<SandboxInfo>> made(targets.size());
  try {
    for (size_t i = 0; i < targets.size(); ++i) {
      if (host.cancelled()) throw Error(ErrorCode::cancelled, "forking Daytona sandbox " + source.id + ": cancelled");
      host.progress("forking Daytona sandbox " + source.id + " (" + std::to_string(i + 1) + " of " +
                    std::to_string(targets.size()) + ")");
      const std::string name = fork_name(targets[i]);
      try {
        made[i] = control_.fork(source.id, name);
      } catch (const Error& e) {
        if (!per_fork(e)) throw;
        // Refused, or cut short after Daytona may have made it: a fork by that name is ours.
        if (e.code() != ErrorCode::quota && !name.empty()) discard_fork(name, host);
        outcomes[i].error = e;
        continue;
      }
      const StringMap labels =
          sdk::remote::creation_labels({targets[i].lease_id, targets[i].slug, targets[i].labels, ""});
      control_.replace_labels(made[i]->id, labels);
      made[i]->labels = labels;
    }
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!made[i]) continue;
      try {
        SandboxInfo info = control_.wait_started(*made[i], host);
        outcomes[i].sandbox = to_sandbox(info);
      } catch (const Error& e) {
        if (!per_fork(e)) throw;
        discard_fork(made[i]->id, host);  // made, but it never started: nobody would own it
        made[i].reset();
        outcomes[i].error = e;
      }
    }
  } catch (const Error&) {
    // The whole call failed: the host learns of none of the forks, so none may be left.
    for (const auto& m : made)
      if (m) discard_fork(m->id, host);
    throw;
  }
  return outcomes;
}

}  // namespace corral::daytona
