#!/usr/bin/env bash
# Installs missing dependencies, builds with warnings as errors and runs the whole test
# suite. This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
CORRAL_CMAKE_ARGS="-DCORRAL_WERROR=ON ${CORRAL_CMAKE_ARGS:-}" scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
