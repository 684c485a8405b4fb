#!/usr/bin/env bash
# Re-makes the verification records kept in docs/providers/records/: runs the conformance
# kit against every built-in plugin on its stand-in (the test case of each plugin's suite
# that holds its record against the tree's), writing each fresh record into the tree, then
# regenerates docs/providers/ from them. Run it after a change to the kit or a plugin that
# changes what the kit shows; CI fails until the records say it (see docs/plugin-authoring.md).
# Usage: scripts/records.sh     (BUILD_DIR defaults to build/; builds what the tests need)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$here/build}"
cd "$here"
CORRAL_BUILD_TARGET=all scripts/build.sh
for suite in e2e_local e2b_e2e_test daytona_e2e_test kubernetes_e2e_test docker-sandbox-e2e; do
  echo "records.sh: $suite" >&2
  CORRAL_UPDATE_RECORDS=1 "$build/tests/$suite" --test-case='*passes the conformance kit*'
done
BUILD_DIR="$build" scripts/docs.sh
git status --short docs/providers
