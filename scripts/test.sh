#!/usr/bin/env bash
# Installs missing dependencies, builds everything (corral, its plugins and the test
# suite; whatever scripts/run.sh already built is reused) with warnings as errors and
# runs the whole test suite. This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# lintian: the package test (tests/install/package_test.sh) checks the .debs with it.
scripts/deps.sh lintian
CORRAL_BUILD_TARGET=all CORRAL_CMAKE_ARGS="-DCORRAL_WERROR=ON ${CORRAL_CMAKE_ARGS:-}" scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
