// E2B's fork: one request snapshots the running sandbox and starts up to 100 sandboxes
// from it, each reported on its own. E2B forks only a running sandbox, so a paused one is
// resumed for the fork and paused again after it; and a fork inherits its source's
// metadata, which E2B cannot change later, so the forks carry the source's labels (the
// host tracks them by sandbox ID).
#include <algorithm>

#include "errors.hpp"
#include "provider.hpp"

namespace corral::e2b {
namespace {

// E2B's most forks per request (SandboxForkRequest.count).
constexpr std::size_t kMaxForksPerCall = 100;

// Why fork `n` (1-based) of sandbox `id` did not start: the error E2B would have given
// for it alone (429: the team's concurrent-sandbox limit).
Error fork_failed(const sdk::http::Response& failure, const std::string& id, std::size_t n) {
  return api_error(failure, "E2B fork " + std::to_string(n) + " of sandbox " + id);
}

}  // namespace

void E2bProvider::delete_forks(const std::vector<std::string>& ids, const sdk::Host& host) {
  for (const std::string& id : ids) {
    try {
      control_.kill(id);
      live_.erase(id);
    } catch (const Error& e) {
      host.warn("could not delete E2B sandbox " + id + ", a fork corral made: " + e.what() +
                "; delete it with `e2b sandbox kill " + id + "`, or E2B does when its lifetime ends");
    }
  }
}

std::vector<ForkOutcome> E2bProvider::fork(const Sandbox& source, const std::vector<ForkTarget>& targets,
                                           const sdk::Host& host) {
  check_sandbox_id(source.id);
  if (targets.empty()) return {};
  const SandboxInfo before = control_.get(source.id, host);  // not-found when it is gone
  const bool was_paused = before.state == "paused";
  if (was_paused) {
    host.progress("resuming E2B sandbox " + source.id + " to fork it; it is paused again afterwards");
    connect(source.id, host);
  }
  // Put back as it was (paused again) whatever happens; a failure to is a warning, as
  // the forks are made.
  const auto restore_source = [&] {
    if (!was_paused) return;
    try {
      control_.pause(source.id, settings_.pause_memory);
      live_[source.id].connected = false;
    } catch (const Error& e) {
      host.warn("E2B sandbox " + source.id + " was resumed to fork it and could not be paused again (" + e.what() +
                "); pause it with `corral pause`");
    }
  };

  std::vector<ForkOutcome> out;
  std::vector<std::string> made;
  try {
    for (std::size_t first = 0; first < targets.size(); first += kMaxForksPerCall) {
      const std::size_t count = std::min(kMaxForksPerCall, targets.size() - first);
      host.progress("forking E2B sandbox " + source.id + " into " + std::to_string(count) +
                    (count == 1 ? " sandbox" : " sandboxes"));
      std::vector<ForkAttempt> attempts = control_.fork(source.id, static_cast<int>(count), host);
      for (ForkAttempt& attempt : attempts)
        if (attempt.sandbox) made.push_back(attempt.sandbox->id);
      if (attempts.size() != count)
        throw sdk::http::unexpected_answer("E2B fork sandbox " + source.id,
                                           std::to_string(attempts.size()) + " results for " + std::to_string(count) +
                                               " forks");
      for (std::size_t i = 0; i < attempts.size(); ++i) {
        ForkOutcome outcome;
        if (SandboxInfo* info = attempts[i].sandbox ? &*attempts[i].sandbox : nullptr) {
          info->state = "running";
          info->metadata = before.metadata;  // inherited; the fork answer does not repeat it
          Live& live = live_[info->id];
          live.access_token = info->envd_access_token;
          live.domain = info->domain;
          live.connected = true;  // fresh: its lifetime was just set
          outcome.sandbox = to_sandbox(*info);
          // A fork keeps its source's network, and the record of it its secrets need.
          if (auto network = source.details.find("network"); network != source.details.end())
            outcome.sandbox->details["network"] = network->second;
        } else {
          outcome.error = fork_failed(attempts[i].failure, source.id, first + i + 1);
        }
        out.push_back(std::move(outcome));
      }
      // The request itself is never cut short (see ControlPlane::fork): Ctrl-C is heard
      // between requests and undoes them all.
      if (host.cancelled()) throw Error(ErrorCode::cancelled, "forking E2B sandbox " + source.id + " was cancelled");
    }
  } catch (...) {
    delete_forks(made, host);
    restore_source();
    throw;
  }
  restore_source();
  return out;
}

}  // namespace corral::e2b
