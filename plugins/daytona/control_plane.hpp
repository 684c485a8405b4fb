// Daytona's control plane (api.json): create, inspect, start, stop, pause, fork, label,
// list and delete sandboxes, preview URLs and the auto-stop and auto-pause intervals.
// Every call is bounded in time; reads and setters retry 429 answers, creating and
// forking never do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api.hpp"
#include "corral/sdk.hpp"

namespace corral::daytona {

// What the control plane says about one sandbox (absent fields are empty or 0).
struct SandboxInfo {
  std::string id;
  std::string name;
  std::string state;  // api.json's SandboxState: creating | started | stopped | paused | error | ...
  std::string error_reason;
  std::string sandbox_class;  // linux-vm | container | ...; empty when not reported
  std::string snapshot;
  std::string user;
  std::string target;
  std::string toolbox_proxy_url;
  std::string created_at;
  std::int64_t auto_stop_minutes = -1;   // -1 = not reported
  std::int64_t auto_pause_minutes = -1;  // -1 = not reported
  StringMap labels;
};

struct PreviewUrl {
  std::string url;
  std::string token;  // empty for a public sandbox
};

// The CreateSandbox allow lists of an allow: policy (api.json), each comma-separated and
// empty when it has no entry: `networks` for networkAllowList ("CIDR network addresses";
// a bare address as a one-address CIDR), `domains` for domainAllowList ("allowed
// domains", "*.daytona.io" wildcards included).
struct AllowLists {
  std::string networks;
  std::string domains;
};
AllowLists allow_lists(const NetworkPolicy& network);

class ControlPlane {
 public:
  // Calls the control plane at the settings' api-url through `api`; both must outlive it.
  ControlPlane(const Api& api, const Settings& settings);

  // POST /sandbox labelled `labels`, from the configured snapshot or image, with the
  // configured resources, region and auto-stop interval, its egress limited by `network`
  // (allow_lists). Returns the first answer (the sandbox is usually still creating).
  SandboxInfo create(const StringMap& labels, const NetworkPolicy& network);
  // GET /sandbox/{id}; Error(not_found) when it is gone.
  SandboxInfo get(const std::string& id, const sdk::Host& host);
  // Polls `info` with backoff until it is started; `error` and `build_failed` fail at once
  // with Daytona's reason, and a sandbox still not started after the start timeout fails
  // naming that setting.
  SandboxInfo wait_started(SandboxInfo info, const sdk::Host& host);
  // Polls `info` with backoff while it is pausing or stopping; fails as wait_started does.
  SandboxInfo wait_settled(SandboxInfo info, const sdk::Host& host);
  // POST /sandbox/{id}/start (a stopped, archived or paused sandbox), then waits until started.
  SandboxInfo start(const std::string& id, const sdk::Host& host);
  // POST /sandbox/{id}/pause (VM sandboxes only), then waits until it is no longer pausing.
  SandboxInfo pause(const std::string& id, const sdk::Host& host);
  // POST /sandbox/{id}/stop, then waits until it is no longer stopping.
  SandboxInfo stop(const std::string& id, const sdk::Host& host);
  // POST /sandbox/{id}/fork named `name` (empty: Daytona names it); returns the first
  // answer (the fork is usually still being made). Never retried: each call makes one.
  SandboxInfo fork(const std::string& id, const std::string& name);
  // PUT /sandbox/{id}/labels: `labels` replace the sandbox's.
  void replace_labels(const std::string& id, const StringMap& labels);
  // DELETE /sandbox/{id}; false when it was already gone.
  bool remove(const std::string& id);
  // GET /sandbox filtered by `labels`, following nextCursor pages.
  std::vector<SandboxInfo> list(const StringMap& labels, const sdk::Host& host);
  // GET /sandbox/{id}/ports/{port}/preview-url.
  PreviewUrl preview_url(const std::string& id, int port, const sdk::Host& host);
  // POST /sandbox/{id}/autostop/{minutes} (0 = never).
  void set_auto_stop(const std::string& id, std::int64_t minutes);
  // POST /sandbox/{id}/autopause/{minutes} (0 = never; VM sandboxes with auto-stop 0 only).
  void set_auto_pause(const std::string& id, std::int64_t minutes);
  // The sandbox's toolbox base URL: what Daytona reported, else GET .../toolbox-proxy-url.
  std::string toolbox_url(const SandboxInfo& info, const sdk::Host& host);

 private:
  // "/sandbox/{id}", after the control plane's URL.
  std::string sandbox_path(const std::string& id) const;
  // Polls `info` with backoff until `done(state)`; `verb` ("start", "pause") words the
  // progress and the failures.
  SandboxInfo wait_until(SandboxInfo info, bool (*done)(const std::string&), const std::string& verb,
                         const sdk::Host& host);
  // POST /sandbox/{id}/{action} without a body, answered by the sandbox.
  SandboxInfo lifecycle(const std::string& id, const std::string& action);
  // POST /sandbox/{id}/{setting}/{minutes}.
  void set_interval(const std::string& id, const std::string& setting, const std::string& what, std::int64_t minutes);

  const Api& api_;
  sdk::remote::ApiClient calls_;
  const Settings& settings_;
};

// Sandbox IDs become URL path segments: throws invalid-argument for anything that is not
// a plain ID.
void check_sandbox_id(const std::string& id);

// True for a sandbox that runs nothing and keeps its files until started again: stopped,
// archived or paused.
bool at_rest(const std::string& state);

// True for a sandbox class that can pause (Daytona's VM sandboxes); false for containers
// and for an API that does not report the class.
bool can_pause(const SandboxInfo& info);

// The fields of one Sandbox object; Error(unavailable) for a malformed one.
SandboxInfo sandbox_info_from(const json::Value& value, const std::string& what);

}  // namespace corral::daytona
