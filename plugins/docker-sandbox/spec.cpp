#include "spec.hpp"

namespace corral::docker_sandbox {

const char* const kSpecJson = R"JSON({
  "name": "docker-sandbox",
  "aliases": ["sbx", "docker-sandboxes"],
  "family": "docker",
  "kind": "delegated-run",
  "targets": ["linux"],
  "features": ["run-session", "workspace-mount", "cleanup", "run-downloads", "pause-resume",
               "exec-stdin", "exec-signals", "exec-tty"],
  "options": [
    {"name": "cli", "type": "program", "default": "sbx", "env": ["CORRAL_SBX_CLI"], "trusted": true,
     "help": "the sbx executable: a name looked up on PATH or a path"},
    {"name": "template", "type": "string", "env": ["CORRAL_SBX_TEMPLATE"],
     "help": "container image the sandbox starts from (sbx create --template); default: sbx's shell image"},
    {"name": "cpus", "type": "int", "env": ["CORRAL_SBX_CPUS"],
     "help": "CPUs for the sandbox (sbx create --cpus); default: sbx's choice, host CPUs minus one"},
    {"name": "memory", "type": "string", "env": ["CORRAL_SBX_MEMORY"],
     "help": "memory limit in binary units such as 4g or 1024m (sbx create --memory); default: half the host's memory"},
    {"name": "workdir", "type": "string", "env": ["CORRAL_SBX_WORKDIR"],
     "help": "absolute folder inside the sandbox that commands run relative to; default: the workspace path, where sbx mounts the working tree"},
    {"name": "cli-timeout", "type": "duration", "default": "5m", "env": ["CORRAL_SBX_CLI_TIMEOUT"],
     "help": "longest one sbx control command (create, ls, stop, rm, cp, version, diagnose, and the exec that resumes a paused sandbox) may take"}
  ],
  "docs": {
    "category": "local microVM",
    "location": "local",
    "gpu": "no",
    "cleanupOwner": "corral (sbx rm)",
    "bestFit": "running agent-written or untrusted commands on a workstation that has Docker Sandboxes, against the live working tree",
    "authentication": "a Docker sign-in held by sbx (`sbx login`)",
    "caveat": "needs the sbx CLI, a Docker sign-in and hardware virtualization; the working tree is mounted read-write, so commands change local files; pausing ends running processes; no fork",
    "isolation": "a microVM on this machine (Docker Sandboxes)",
    "pause": "files only: `sbx stop` ends running processes; a stopped sandbox lasts until it is removed"
  }
})JSON";

}  // namespace corral::docker_sandbox
