#include "spec.hpp"

namespace corral_ssh {

// Every setting that decides where corral connects, as whom, or which key and host keys
// it trusts is "trusted": a repository's corral.yaml can never point a user's key at
// another machine. Unset settings are left to ssh, so ~/.ssh/config still applies.
// No keep-alive, url-bridge or pause-resume: a host the team owns has no lifetime to
// extend, no public URL and nothing to pause, and advertising them would be a lie.
const char* const kSpecJson = R"json({
  "name": "ssh",
  "family": "ssh",
  "kind": "ssh-lease",
  "targets": ["linux"],
  "features": ["run-session", "archive-sync", "cleanup", "run-downloads"],
  "options": [
    {"name": "host", "type": "host", "trusted": true, "env": ["CORRAL_SSH_HOST"],
     "help": "the machine to run on: a host name, an address or a Host alias from ~/.ssh/config"},
    {"name": "port", "type": "int", "trusted": true, "env": ["CORRAL_SSH_PORT"],
     "help": "SSH port; unset leaves it to ~/.ssh/config (else 22)"},
    {"name": "user", "type": "string", "trusted": true, "env": ["CORRAL_SSH_USER"],
     "help": "account to log in as; unset leaves it to ~/.ssh/config (else your local user name)"},
    {"name": "identity-file", "type": "path", "trusted": true, "env": ["CORRAL_SSH_IDENTITY_FILE"],
     "help": "private key to log in with (ssh -i); only this key is offered (IdentitiesOnly=yes)"},
    {"name": "known-hosts-file", "type": "path", "trusted": true, "env": ["CORRAL_SSH_KNOWN_HOSTS_FILE"],
     "help": "known_hosts file holding the host's key; unset uses ssh's own (~/.ssh/known_hosts). Unknown or changed host keys are always refused"},
    {"name": "remote-root", "type": "string", "trusted": true, "default": ".corral/leases", "env": ["CORRAL_SSH_REMOTE_ROOT"],
     "help": "folder on the host that holds one folder per lease (<root>/<lease>/workspace); relative to the login folder unless absolute"},
    {"name": "use-agent", "type": "bool", "trusted": true, "default": "false", "env": ["CORRAL_SSH_USE_AGENT"],
     "help": "pass SSH_AUTH_SOCK to ssh so a passphrase-protected key can come from your ssh-agent; nothing else of your environment reaches ssh"}
  ],
  "docs": {
    "category": "your own machine over SSH",
    "location": "self-hosted",
    "gpu": "whatever the host has",
    "cleanupOwner": "corral (corral stop removes the lease folder on the host)",
    "bestFit": "running on a build box or GPU machine your team already owns and reaches with ssh",
    "caveat": "no isolation beyond a folder per lease: commands run as the SSH account, with its rights, next to other leases",
    "authentication": "your SSH key (identity-file or ~/.ssh/config), optionally through ssh-agent; the host key must already be in the known-hosts file",
    "isolation": "none beyond a folder per lease: commands run as the SSH account on your host"
  }
})json";

}  // namespace corral_ssh
