#include "spec.hpp"

#include "corral/json.hpp"
#include "errors.hpp"

namespace corral::daytona {

// The credentials and endpoint use the official Daytona SDK's environment variables, so
// an existing Daytona setup just works.
const char* const kSpecJson = R"json({
  "name": "daytona",
  "family": "daytona",
  "kind": "delegated-run",
  "targets": ["linux"],
  "features": ["run-session", "url-bridge", "archive-sync", "keep-alive", "cleanup", "run-downloads",
               "pause-resume", "fork", "network-policy", "network-allowlist",
               "network-allowlist-domains", "exec-stdin", "exec-signals"],
  "idle": ["pause", "stop"],
  "options": [
    {"name": "api-key", "type": "string", "env": ["DAYTONA_API_KEY"], "secret": true,
     "help": "Daytona API key (from https://app.daytona.io/dashboard/keys), sent as Authorization: Bearer"},
    {"name": "api-url", "type": "url", "default": "https://app.daytona.io/api", "env": ["DAYTONA_API_URL"],
     "trusted": true,
     "help": "Daytona API URL, with its /api prefix; plain http only for loopback hosts"},
    {"name": "organization-id", "type": "string", "env": ["DAYTONA_ORGANIZATION_ID"], "trusted": true,
     "help": "organization to act in (X-Daytona-Organization-ID); default: the API key's own"},
    {"name": "target", "type": "string", "env": ["DAYTONA_TARGET"],
     "help": "region to create sandboxes in (e.g. us, eu); default: the organization's default"},
    {"name": "snapshot", "type": "string", "env": ["CORRAL_DAYTONA_SNAPSHOT"],
     "help": "snapshot (ID or name) to create sandboxes from; default: Daytona's default snapshot"},
    {"name": "image", "type": "string", "env": ["CORRAL_DAYTONA_IMAGE"],
     "help": "container image to build sandboxes from instead of a snapshot (e.g. python:3.12-slim); the first create builds it"},
    {"name": "user", "type": "string", "env": ["CORRAL_DAYTONA_USER"],
     "help": "sandbox user that runs commands; default: the snapshot's user (daytona)"},
    {"name": "workdir", "type": "string", "default": "workspace", "env": ["CORRAL_DAYTONA_WORKDIR"],
     "help": "folder in the sandbox that receives the workspace: absolute, or relative to the user's home; every sync unpacks over it, so files made in the sandbox stay"},
    {"name": "auto-stop", "type": "int", "default": "60", "env": ["CORRAL_DAYTONA_AUTO_STOP"],
     "help": "minutes without activity before Daytona stops the sandbox (0 = never), or pauses it with --idle pause where it can; a running command keeps it active, and a reused sandbox is started again"},
    {"name": "cpu", "type": "int", "env": ["CORRAL_DAYTONA_CPU"],
     "help": "CPU cores of new sandboxes (with --daytona-image); default: Daytona's"},
    {"name": "memory", "type": "int", "env": ["CORRAL_DAYTONA_MEMORY"],
     "help": "memory of new sandboxes in GiB (with --daytona-image); default: Daytona's"},
    {"name": "disk", "type": "int", "env": ["CORRAL_DAYTONA_DISK"],
     "help": "disk of new sandboxes in GiB (with --daytona-image); default: Daytona's"},
    {"name": "create-timeout", "type": "duration", "default": "2m", "env": ["CORRAL_DAYTONA_CREATE_TIMEOUT"],
     "help": "longest wait for Daytona to answer the create call; a create cut short is cleaned up by its lease label"},
    {"name": "request-timeout", "type": "duration", "default": "30s", "env": ["CORRAL_DAYTONA_REQUEST_TIMEOUT"],
     "help": "longest wait for any other Daytona call (control plane and the sandbox's toolbox); reading a command's whole log may take longer while data keeps coming"},
    {"name": "start-timeout", "type": "duration", "default": "10m", "env": ["CORRAL_DAYTONA_START_TIMEOUT"],
     "help": "longest wait for a new or restarted sandbox to reach started (building an image can take minutes); a new sandbox that does not is deleted"}
  ],
  "docs": {
    "category": "cloud sandbox",
    "location": "cloud",
    "gpu": "no",
    "cleanupOwner": "corral; Daytona stops idle sandboxes after the auto-stop interval",
    "bestFit": "cloud sandboxes from Daytona snapshots or images, output streamed live, kept and reused across runs",
    "caveat": "output passes Daytona's line-based log base64-encoded, so the sandbox needs sh, dd and base64 (or od); piped input passes as escaped text lines the sandbox's shell decodes (a few MB/s); an idle kept sandbox is stopped (corral starts it again on reuse)",
    "isolation": "a Daytona sandbox in Daytona's cloud",
    "pause": "files kept, processes end (Daytona pauses or stops it, and may archive it at rest); it lasts until stopped or its Daytona lifetime ends",
    "fork": "one at a time: one Daytona fork per new sandbox",
    "network": "none, addresses (networkAllowList) and domains (domainAllowList), enforced by Daytona"
  }
})json";

const sdk::remote::Identity& identity() {
  static const sdk::remote::Identity daytona{
      "Daytona", sdk::SettingNames(json::spec_from_json(kSpecJson)), "https://app.daytona.io/dashboard/keys",
      "it was deleted, in the Daytona dashboard or by its auto-delete interval", &api_error};
  return daytona;
}

}  // namespace corral::daytona
