#include "spec.hpp"

namespace corral::local {

const char* const kSpecJson = R"json({
  "name": "local",
  "aliases": ["bwrap", "bubblewrap"],
  "family": "local",
  "kind": "delegated-run",
  "targets": ["linux"],
  "features": ["run-session", "archive-sync", "tree-sync", "url-bridge", "cleanup", "run-downloads",
               "network-policy", "network-allowlist", "network-allowlist-domains", "network-allowlist-ports",
               "egress-secrets", "pause-resume", "fork", "exec-stdin", "exec-signals",
               "exec-tty", "exec-concurrent"],
  "options": [
    {"name": "network", "type": "string", "default": "shared", "choices": ["none", "shared"], "tightest-first": true,
     "env": ["CORRAL_LOCAL_NETWORK"],
     "help": "shared: the command uses this machine's network; none: only a private loopback (for one sandbox: --network none)"},
    {"name": "bwrap", "type": "program", "default": "bwrap", "env": ["CORRAL_BWRAP"], "trusted": true,
     "help": "the bubblewrap executable"},
    {"name": "dir", "type": "path", "env": ["CORRAL_LOCAL_DIR"], "trusted": true,
     "help": "where sandbox folders live (default: $XDG_STATE_HOME/corral/local)"},
    {"name": "workdir", "type": "string", "default": "/workspace", "env": ["CORRAL_LOCAL_WORKDIR"],
     "help": "the workspace's path inside the sandbox"},
    {"name": "egress-ca-file", "type": "path", "env": ["CORRAL_EGRESS_CA_FILE"], "trusted": true,
     "help": "a PEM file of more CAs to verify a secret's hosts with (a corporate proxy's), beside this machine's"}
  ],
  "docs": {
    "category": "local sandbox (bubblewrap)",
    "location": "local",
    "gpu": "no",
    "cleanupOwner": "corral: a sandbox is a folder, removed at the end of the run or by `corral stop`",
    "bestFit": "fast, free test runs on a Linux machine or CI runner; the default",
    "caveat": "shares the host kernel and, unless --network none or allow:, its network; with allow: only programs that use the proxy variables (HTTP_PROXY, ...) reach anything; Linux with user namespaces only",
    "isolation": "Linux namespaces (bubblewrap) on this machine's kernel, as a user of the jail's own",
    "pause": "files only: no process outlives a run; a paused sandbox lasts until it is stopped",
    "fork": "one to many in one call: each fork a copy of the sandbox's folder",
    "network": "none (a network namespace of its own), shared with this machine, or allow: hosts by name, address or CIDR and port, through corral's proxy on this machine"
  }
})json";

}  // namespace corral::local
