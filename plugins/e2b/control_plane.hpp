// E2B's control plane (openapi.yml): create, inspect, list, connect to, extend and kill
// sandboxes. Every call has a bounded timeout (a setting) and carries the API key as
// X-API-Key only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "corral/sdk.hpp"
#include "corral/sdk/http.hpp"
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

class ControlPlane {
 public:
  ControlPlane(sdk::http::Client& client, const Settings& settings) : client_(client), settings_(settings) {}

  // POST /sandboxes from `template_id` living `lifetime_seconds`, tagged with `metadata`,
  // its egress limited by `network`. A lifetime above the account cap is retried once at
  // the cap, with a warning.
  SandboxInfo create(const StringMap& metadata, const NetworkPolicy& network, const sdk::Host& host);
  // GET /sandboxes/{id}; Error(not_found) when it is gone.
  SandboxInfo get(const std::string& id, const sdk::Host& host);
  // POST /sandboxes/{id}/connect: resumes a paused sandbox and extends (never shortens)
  // its lifetime to the configured one.
  SandboxInfo connect(const std::string& id, const sdk::Host& host);
  // POST /sandboxes/{id}/timeout: the sandbox now ends `seconds` from now (capped as above;
  // `setting` names what asked for `seconds` in the warning, e.g. "--by").
  void set_timeout(const std::string& id, std::int64_t seconds, const std::string& setting, const sdk::Host& host);
  // DELETE /sandboxes/{id}; false when it was already gone.
  bool kill(const std::string& id);
  // GET /v2/sandboxes filtered by `metadata`, following X-Next-Token pages.
  std::vector<SandboxInfo> list(const StringMap& metadata, const sdk::Host& host);

 private:
  // A call's time limit and the setting that chose it, which a timeout's message names.
  struct Timeout {
    std::int64_t seconds;
    std::string setting;
  };

  // Sends a control-plane call with the API key, again on a busy answer when `retry`
  // allows (never for create: a sandbox could be made twice); `cancellable` only for
  // calls with no side effect, so Ctrl-C never leaves a sandbox created behind our back.
  sdk::http::Response call(const std::string& method, const std::string& path, const std::string& body,
                           sdk::http::Retry retry, const std::string& what, const Timeout& timeout,
                           const sdk::Host* cancellable);
  // The limit of create and connect (which may resume a paused sandbox), and of the rest.
  Timeout create_timeout() const { return {settings_.create_timeout_seconds, setting_name("create-timeout")}; }
  Timeout request_timeout() const { return {settings_.request_timeout_seconds, setting_name("request-timeout")}; }
  // Runs `attempt(seconds)`; on E2B's lifetime-cap refusal warns (naming `setting`, the
  // option that asks for a specific lifetime) and retries once at the cap.
  sdk::http::Response with_lifetime_cap(std::int64_t seconds, const std::string& setting, const sdk::Host& host,
                                        const std::function<sdk::http::Response(std::int64_t)>& attempt);

  sdk::http::Client& client_;
  const Settings& settings_;
};

}  // namespace corral::e2b
