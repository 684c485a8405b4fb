#!/usr/bin/env bash
# The reliability pass, one entry for CI: installs clang (scripts/deps.sh), builds
# everything with clang under AddressSanitizer and UndefinedBehaviorSanitizer (plugins,
# helpers and stand-ins too; through ccache, as every build) into build-sanitized/ and runs
# the test suite there; then builds the fuzz targets into build-fuzz/ (the same sanitizers,
# plus libFuzzer's coverage in every library: -DCORRAL_FUZZ=ON) and runs each for a
# bounded time. Any test failure, sanitizer report or fuzz crash fails the run; both parts
# run either way, so one run shows everything. Arguments go to ctest (e.g. -R e2b).
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022  # plugins and registries must not be group-writable, or corral refuses them
# llvm: llvm-symbolizer, without which sanitizer reports name no source lines.
scripts/deps.sh clang libclang-rt-dev llvm
configure() {
  local dir=$1
  shift
  CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCORRAL_WERROR=ON \
    -DCORRAL_SANITIZE=address,undefined "$@" >/dev/null
}
export ASAN_OPTIONS=abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$PWD/tests/sanitizers/ubsan.supp
failed=0

# The suite's build has no fuzzing coverage: it would only slow every test down.
configure build-sanitized -DCORRAL_FUZZ=OFF
started=$SECONDS
cmake --build build-sanitized -j "$(nproc)"
echo "sanitized build: $((SECONDS - started)) s"
started=$SECONDS
# The install and ssh tests build plugins against an installed SDK with the system's
# default flags, which an instrumented SDK cannot link into; the main suite runs them.
ctest --test-dir build-sanitized --output-on-failure -j "$(nproc)" -LE 'install|ssh' "$@" || failed=1
echo "sanitized tests: $((SECONDS - started)) s"

configure build-fuzz -DCORRAL_FUZZ=ON
started=$SECONDS
cmake --build build-fuzz -j "$(nproc)" --target corral_fuzz_targets
scripts/fuzz.sh build-fuzz 8 || failed=1
echo "fuzz build and runs: $((SECONDS - started)) s"
exit $failed
