#!/usr/bin/env bash
# The quick start: installs what is missing, builds, and runs a command from the current
# folder in a local sandbox. Usage: scripts/run.sh [-- COMMAND ARGS...]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/build.sh" >&2
[ "${1:-}" = "--" ] && shift
if [ $# -eq 0 ]; then
  set -- sh -c 'echo "hello from a corral sandbox: $(uname -sr), in $(pwd)"; ls'
fi
exec "$here/build/bin/corral" run -- "$@"
