#!/usr/bin/env bash
# The reliability pass: builds everything with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer (plugins, helpers and stand-ins too) into build-sanitized/,
# runs the test suite there, then every fuzz target for a bounded time. Any sanitizer
# report fails the run. scripts/test.sh runs it after the main suite; arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022  # plugins and registries must not be group-writable, or corral refuses them
scripts/deps.sh clang libclang-rt-dev
CC=clang CXX=clang++ cmake -S . -B build-sanitized -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCORRAL_WERROR=ON -DCORRAL_SANITIZE=address,undefined -DCORRAL_FUZZ=ON >/dev/null
cmake --build build-sanitized -j "$(nproc)"
export ASAN_OPTIONS=abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$PWD/tests/sanitizers/ubsan.supp
# The install and ssh tests build plugins against an installed SDK with the system's
# default flags, which an instrumented SDK cannot link into; the main suite runs them.
ctest --test-dir build-sanitized --output-on-failure -j "$(nproc)" -LE 'install|ssh' "$@"
scripts/fuzz.sh build-sanitized 8
