#include "spec.hpp"

#include "corral/json.hpp"
#include "errors.hpp"

namespace corral::e2b {

// Environment variable names follow E2B's own SDKs so an existing E2B setup just works.
const char* const kSpecJson = R"json({
  "name": "e2b",
  "family": "e2b",
  "kind": "delegated-run",
  "targets": ["linux"],
  "features": ["run-session", "url-bridge", "archive-sync", "keep-alive", "cleanup", "run-downloads",
               "network-policy", "network-allowlist",
               "network-allowlist-domains", "egress-secrets", "pause-resume", "fork", "exec-stdin",
               "exec-signals", "exec-tty", "exec-concurrent"],
  "idle": ["pause"],
  "options": [
    {"name": "api-key", "type": "string", "env": ["E2B_API_KEY"], "secret": true,
     "help": "E2B API key (from https://e2b.dev/dashboard?tab=keys), sent as X-API-Key"},
    {"name": "api-url", "type": "url", "trusted": true, "default": "https://api.e2b.app", "env": ["E2B_API_URL"],
     "help": "E2B control-plane URL; plain http only for loopback hosts"},
    {"name": "domain", "type": "host", "trusted": true, "default": "e2b.app", "env": ["E2B_DOMAIN"],
     "help": "domain of sandbox hosts: envd at 49983-<sandboxID>.<domain>, ports at <port>-<sandboxID>.<domain>"},
    {"name": "sandbox-url", "type": "url", "trusted": true, "env": ["E2B_SANDBOX_URL"],
     "help": "base URL for every envd request instead of the per-sandbox host; routed by the E2b-Sandbox-Id and E2b-Sandbox-Port headers"},
    {"name": "template", "type": "string", "default": "base", "env": ["CORRAL_E2B_TEMPLATE"],
     "help": "E2B template (ID or alias) to create sandboxes from; build your own with `e2b template build`"},
    {"name": "workdir", "type": "string", "default": "/home/user/workspace", "env": ["CORRAL_E2B_WORKDIR"],
     "help": "absolute folder in the sandbox that receives the workspace; every sync unpacks it over the folder, so files made in the sandbox stay"},
    {"name": "user", "type": "string", "default": "user", "env": ["CORRAL_E2B_USER"],
     "help": "sandbox user that runs commands and owns the synced files"},
    {"name": "lifetime", "type": "duration", "default": "1h", "env": ["CORRAL_E2B_LIFETIME"],
     "help": "how long a sandbox lives before E2B deletes it (E2B caps it per plan: 1h Hobby, 24h Pro); reuse extends it"},
    {"name": "pause-memory", "type": "bool", "default": "true", "env": ["CORRAL_E2B_PAUSE_MEMORY"],
     "help": "whether a pause (`corral pause`, `--idle pause`) keeps the sandbox's memory, so its processes go on at resume; false keeps only the files: it costs less, and resuming boots the sandbox afresh"},
    {"name": "create-timeout", "type": "duration", "default": "2m", "env": ["CORRAL_E2B_CREATE_TIMEOUT"],
     "help": "how long creating a sandbox, resuming or pausing a kept one, or forking one may take before corral gives up (and deletes what the create or fork made); 1s to 1d"},
    {"name": "request-timeout", "type": "duration", "default": "30s", "env": ["CORRAL_E2B_REQUEST_TIMEOUT"],
     "help": "how long any other E2B API call (get, list, extend, delete) may take before corral gives up; 1s to 1d"},
    {"name": "stall-timeout", "type": "duration", "default": "150s", "env": ["CORRAL_E2B_STALL_TIMEOUT"],
     "help": "how long the command's output stream may stay silent, with no keep-alive either, before corral gives up on the connection; envd is asked for a keep-alive every third of it (at most every 50s); 3s to 1d"}
  ],
  "docs": {
    "category": "cloud microVM",
    "location": "cloud",
    "gpu": "no",
    "cleanupOwner": "corral; E2B deletes a sandbox when its lifetime ends",
    "bestFit": "isolated Linux runs in seconds-fast Firecracker microVMs, kept and reused across runs",
    "caveat": "the sandbox lifetime is capped by the E2B plan; a kept sandbox past it is gone unless it is paused (or kept with --idle pause)",
    "isolation": "Firecracker microVM in E2B's cloud",
    "pause": "memory and processes kept (--e2b-pause-memory, the default) or files only; a paused sandbox is not ended by its lifetime",
    "fork": "one to many in one call (E2B's fork of a sandbox, memory included)",
    "network": "none, addresses and domains, enforced by E2B outside the sandbox"
  }
})json";

const sdk::remote::Identity& identity() {
  static const sdk::remote::Identity e2b = [] {
    sdk::SettingNames names(json::spec_from_json(kSpecJson));
    std::string gone = "E2B deletes a sandbox when its lifetime ends (" + names.flag("lifetime") + " sets it)";
    return sdk::remote::Identity{"E2B", std::move(names), "https://e2b.dev/dashboard?tab=keys", std::move(gone),
                                 &api_error};
  }();
  return e2b;
}

}  // namespace corral::e2b
