// Daytona's control plane (api.json): create, inspect, start, list and delete sandboxes,
// preview URLs and the auto-stop interval. Every call is bounded in time; reads and
// setters retry 429 answers, creating never does.
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
  std::string state;  // creating | starting | started | stopped | error | build_failed | ...
  std::string error_reason;
  std::string snapshot;
  std::string user;
  std::string target;
  std::string toolbox_proxy_url;
  std::string created_at;
  std::int64_t auto_stop_minutes = -1;  // -1 = not reported
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
  ControlPlane(Api& api, const Settings& settings) : api_(api), settings_(settings) {}

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
  // POST /sandbox/{id}/start (a stopped or archived sandbox), then waits until started.
  SandboxInfo start(const std::string& id, const sdk::Host& host);
  // DELETE /sandbox/{id}; false when it was already gone.
  bool remove(const std::string& id);
  // GET /sandbox filtered by `labels`, following nextCursor pages.
  std::vector<SandboxInfo> list(const StringMap& labels, const sdk::Host& host);
  // GET /sandbox/{id}/ports/{port}/preview-url.
  PreviewUrl preview_url(const std::string& id, int port, const sdk::Host& host);
  // POST /sandbox/{id}/autostop/{minutes} (0 = never).
  void set_auto_stop(const std::string& id, std::int64_t minutes);
  // The sandbox's toolbox base URL: what Daytona reported, else GET .../toolbox-proxy-url.
  std::string toolbox_url(const SandboxInfo& info, const sdk::Host& host);

 private:
  std::string sandbox_path(const std::string& id) const;

  Api& api_;
  const Settings& settings_;
};

// The fields of one Sandbox object; Error(unavailable) for a malformed one.
SandboxInfo sandbox_info_from(const json::Value& value, const std::string& what);

}  // namespace corral::daytona
