#!/usr/bin/env bash
# Installs missing dependencies and builds corral into build/ (build/bin/corral).
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022  # plugins and registries must not be group-writable, or corral refuses them
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CORRAL_CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$(nproc)"
