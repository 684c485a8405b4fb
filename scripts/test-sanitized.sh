#!/usr/bin/env bash
# The reliability pass, one entry for CI (.ci/run calls it after scripts/test.sh):
# installs clang (scripts/deps.sh) and builds everything with it into build-sanitized/,
# under AddressSanitizer and UndefinedBehaviorSanitizer and with libFuzzer's coverage in
# every library (-DCORRAL_FUZZ=ON): plugins, helpers and stand-ins included. One build
# serves both parts: the test suite runs there, then each fuzz target for a bounded time.
# Any test failure, sanitizer report or fuzz crash fails the run; both parts run either
# way, so one run shows everything. Arguments go to ctest (e.g. -R e2b).
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022  # plugins and registries must not be group-writable, or corral refuses them
# llvm: llvm-symbolizer, without which sanitizer reports name no source lines.
scripts/deps.sh clang libclang-rt-dev llvm
build=build-sanitized
# -O1 with line tables only: what the sanitizers' authors recommend, and it builds in far
# less time than -O2 -g while reports still name file and line.
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_FLAGS="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
  -DCORRAL_WERROR=ON -DCORRAL_SANITIZE=address,undefined -DCORRAL_FUZZ=ON >/dev/null
# intercept_tls_get_addr=0: up to LLVM 16 the runtime's __tls_get_addr hook takes a dynamic
# TLS block that happens to start 16 bytes into a page for a pre-2.25 glibc header and records
# the two words before it as the block's bounds; LeakSanitizer's exit-time scan then reads that
# garbage range and dies ("Tracer caught signal 11"), failing a run that leaked nothing. Plugins
# bring dynamic TLS (libcurl's dependencies, thread_local) because they are dlopen()ed. The
# blocks stay reachable through glibc's heap-allocated DTV, so no leak goes unseen without it.
export ASAN_OPTIONS=abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:intercept_tls_get_addr=0
# The suppressions go where every user can read them: some tests run corral as an
# unprivileged user, and a checkout in a private folder (mktemp -d) is closed to them.
supp=$(mktemp /tmp/corral-ubsan-XXXXXX.supp)
trap 'rm -f "$supp"' EXIT
cp tests/sanitizers/ubsan.supp "$supp"
chmod 0644 "$supp"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$supp
failed=0

started=$SECONDS
cmake --build "$build" -j "$(nproc)"
cmake --build "$build" -j "$(nproc)" --target corral_fuzz_targets
echo "sanitized build: $((SECONDS - started)) s"
started=$SECONDS
# The install and ssh tests build plugins against an installed SDK with the system's
# default flags, which an instrumented SDK cannot link into; the main suite runs them.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -LE 'install|ssh' "$@" || failed=1
echo "sanitized tests: $((SECONDS - started)) s"

started=$SECONDS
scripts/fuzz.sh "$build" 8 || failed=1
echo "fuzz runs: $((SECONDS - started)) s"
exit $failed
