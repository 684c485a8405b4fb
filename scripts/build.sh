#!/usr/bin/env bash
# Installs missing dependencies and builds corral and its shipped plugins into build/
# (build/bin/corral), nothing of the test suite: `CORRAL_BUILD_TARGET=all` builds
# everything (scripts/test.sh does). Warnings are errors, as in CI, so the quick start and
# the test command compile alike and scripts/test.sh reuses every object this built
# (CORRAL_CMAKE_ARGS=-DCORRAL_WERROR=OFF relaxes it on a compiler corral was not tried on).
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022  # plugins and registries must not be group-writable, or corral refuses them
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCORRAL_WERROR=ON ${CORRAL_CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$(nproc)" --target "${CORRAL_BUILD_TARGET:-corral-runtime}"
