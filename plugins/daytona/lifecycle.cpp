// The Daytona provider's pause, resume and --idle pause. Daytona pauses only its VM
// sandboxes (their memory kept); a container sandbox is stopped instead, which keeps its
// files: corral reports both as paused, Daytona's own word in details["provider-state"].
#include "provider.hpp"
#include "spec.hpp"

namespace corral::daytona {

Sandbox DaytonaProvider::pause(const Sandbox& sandbox, const sdk::Host& host) {
  check_sandbox_id(sandbox.id);
  SandboxInfo info = control_.wait_settled(control_.get(sandbox.id, host), host);
  if (!at_rest(info.state)) {
    // A sandbox still being made or started is paused once it is up.
    if (info.state != "started") info = control_.wait_started(info, host);
    host.progress(std::string(can_pause(info) ? "pausing" : "stopping") + " Daytona sandbox " + sandbox.id);
    info = can_pause(info) ? control_.pause(sandbox.id, host) : control_.stop(sandbox.id, host);
  }
  live_.erase(sandbox.id);  // its toolbox refuses until it is started again
  if (!at_rest(info.state))
    throw Error(ErrorCode::unavailable,
                "Daytona sandbox " + sandbox.id + " did not pause: it is " + info.state +
                    (info.error_reason.empty() ? "" : " (" + info.error_reason + ")"),
                "check the sandbox in the Daytona dashboard, then retry `corral pause`");
  return to_sandbox(info);
}

Sandbox DaytonaProvider::resume(const Sandbox& sandbox, const sdk::Host& host) {
  check_sandbox_id(sandbox.id);
  return to_sandbox(started(sandbox.id, host));
}

void DaytonaProvider::pause_when_idle(SandboxInfo& info, const sdk::Host& host) {
  const std::int64_t minutes = settings_.auto_stop_minutes;
  if (!can_pause(info)) {
    host.warn("--idle pause: Daytona cannot pause container sandbox " + info.id + ", so it stops after " +
              format_duration(minutes * 60) + " without activity instead, its files kept (VM snapshots, " +
              identity().settings.flag("snapshot") + " daytona-vm-*, can pause)");
    return;
  }
  // At most one of the auto-stop and auto-pause intervals may be non-zero (api.json).
  control_.set_auto_stop(info.id, 0);
  control_.set_auto_pause(info.id, minutes);
  info.auto_stop_minutes = 0;
  info.auto_pause_minutes = minutes;
}

}  // namespace corral::daytona
