#!/usr/bin/env bash
# Regenerates docs/providers/ (the capability matrix in README.md, providers.json and one
# page per built-in provider) from the plugins' own specs, using the built corral.
# Hermetic, like the docs_fresh test that CI runs: a throwaway HOME, XDG dirs and
# /etc/corral, no CORRAL_REGISTRY and a neutral working folder, so only the built-in
# plugins are documented and never a developer's private ones.
# Usage: scripts/docs.sh [--check]     (build first; BUILD_DIR defaults to build/)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$here/build}"
[ -x "$build/bin/corral" ] || { echo "docs.sh: no $build/bin/corral; run scripts/build.sh first" >&2; exit 1; }
corral="$(cd "$build" && pwd)/bin/corral"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/state" "$tmp/config" "$tmp/etc" "$tmp/work"
cd "$tmp/work"
env -i PATH="$PATH" LANG="${LANG:-C.UTF-8}" NO_COLOR=1 HOME="$tmp/home" XDG_STATE_HOME="$tmp/state" \
  XDG_CONFIG_HOME="$tmp/config" CORRAL_ETC_DIR="$tmp/etc" \
  "$corral" docs all --dir "$here/docs/providers" "$@"
