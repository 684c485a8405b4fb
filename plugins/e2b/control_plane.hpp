// E2B's control plane (openapi.yml): create, inspect, list, connect to, extend and kill
// sandboxes. Every call has a bounded timeout (a setting) and carries the API key as
// X-API-Key only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "corral/sdk.hpp"
#include "corral/sdk/http.hpp"
#include "corral/sdk/remote/api_client.hpp"
#include "settings.hpp"

namespace corral::e2b {

// What the control plane says about one sandbox (fields of Sandbox, SandboxDetail and
// ListedSandbox; absent ones are empty).
struct SandboxInfo {
  std::string id;
  std::string template_id;
  std::string alias;
  std::string state;  // running | paused; empty in create/connect answers
  std::string started_at;
  std::string end_at;
  std::string envd_version;
  std::string domain;
  std::string envd_access_token;  // secret
  StringMap metadata;
};

// One entry of a fork's answer (SandboxForkResult): the new sandbox, or why it did not
// start, as the failed answer E2B would have given for it alone (its status and
// {"code","message"} body, for api_error).
struct ForkAttempt {
  std::optional<SandboxInfo> sandbox;
  sdk::http::Response failure;
};

class ControlPlane {
 public:
  // Calls through `client`; both must outlive the control plane.
  ControlPlane(sdk::http::Client& client, const Settings& settings);

  // POST /sandboxes from `template_id` living `lifetime_seconds`, tagged with `metadata`,
  // its egress limited by `network`; `pause_at_end`: E2B pauses it (autoPause, keeping
  // its memory as pause-memory says) instead of deleting it when its lifetime ends. A
  // lifetime above the account cap is retried once at the cap, with a warning.
  SandboxInfo create(const StringMap& metadata, const NetworkPolicy& network, bool pause_at_end,
                     const sdk::Host& host);
  // GET /sandboxes/{id}; Error(not_found) when it is gone.
  SandboxInfo get(const std::string& id, const sdk::Host& host);
  // POST /sandboxes/{id}/connect: resumes a paused sandbox and extends (never shortens)
  // its lifetime to the configured one.
  SandboxInfo connect(const std::string& id, const sdk::Host& host);
  // POST /sandboxes/{id}/pause, keeping its memory when `memory` (else its files only, and
  // resuming it cold-boots it); true when it paused now, false for E2B's 409 (already
  // paused, or busy otherwise); Error(not_found) when it is gone.
  bool pause(const std::string& id, bool memory);
  // POST /sandboxes/{id}/fork: `count` (1 to 100) new sandboxes from a snapshot of the
  // running sandbox `id`, each living the configured lifetime; one attempt per fork, in
  // order. Never sent twice, nor cut short by Ctrl-C (either could leave forks nobody
  // knows of): the create-timeout bounds it. Error(not_found) when `id` is gone.
  std::vector<ForkAttempt> fork(const std::string& id, int count, const sdk::Host& host);
  // POST /sandboxes/{id}/timeout: the sandbox now ends `seconds` from now (capped as above;
  // `setting` names what asked for `seconds` in the warning, e.g. "--by").
  void set_timeout(const std::string& id, std::int64_t seconds, const std::string& setting, const sdk::Host& host);
  // PUT /sandboxes/{id}/network: the running sandbox's egress becomes the allow list
  // `network` again, and each of `secrets` is set as its header on requests to its hosts
  // (transform rules); with none, no rule is left. Error(not_found) when `id` is gone.
  void set_network(const std::string& id, const NetworkPolicy& network, const std::vector<Secret>& secrets);
  // DELETE /sandboxes/{id}; false when it was already gone.
  bool kill(const std::string& id);
  // GET /v2/sandboxes filtered by `metadata`, following X-Next-Token pages.
  std::vector<SandboxInfo> list(const StringMap& metadata, const sdk::Host& host);

 private:
  // Runs `attempt(seconds)`; on E2B's lifetime-cap refusal warns (naming `setting`, the
  // option that asks for a specific lifetime) and retries once at the cap.
  sdk::http::Response with_lifetime_cap(std::int64_t seconds, const std::string& setting, const sdk::Host& host,
                                        const std::function<sdk::http::Response(std::int64_t)>& attempt);

  const Settings& settings_;
  // Every call carries the API key as X-API-Key only. Only calls with no side effect are
  // cancellable, so Ctrl-C never leaves a sandbox created behind corral's back; create and
  // fork are never sent twice (a second sandbox could be made).
  sdk::remote::ApiClient api_;
  // The limit of create, connect (which may resume a paused sandbox), pause and fork, and
  // of the rest.
  const sdk::remote::Limit create_limit_;
  const sdk::remote::Limit request_limit_;
};

}  // namespace corral::e2b
