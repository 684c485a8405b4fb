#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time (default 8 s each, about a minute and a half in
# all): scripts/fuzz.sh [BUILD_DIR] [SECONDS_PER_TARGET]. The build must be configured
# with clang and -DCORRAL_FUZZ=ON (scripts/test-sanitized.sh does, in build-sanitized/).
# Each target starts from its corpus in tests/fuzz/corpus/<name>; inputs it finds are
# kept in a temporary copy, not in the repository. A crash fails the run and names the
# input: add it to the corpus folder so the normal test suite replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitized}
seconds=${2:-8}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$PWD/tests/sanitizers/ubsan.supp}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shopt -s nullglob
targets=("$build"/tests/fuzz/fuzz_*)
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no fuzz_* targets in $build/tests/fuzz (configure with clang and -DCORRAL_FUZZ=ON)" >&2; exit 1; }
failed=0
for target in "${targets[@]}"; do
  name=${target##*/fuzz_}
  mkdir -p "$work/$name/corpus" "$work/$name/crashes"
  cp -r "tests/fuzz/corpus/$name/." "$work/$name/corpus/"
  if "$target" "$work/$name/corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$work/$name/crashes/" -print_final_stats=0 > "$work/$name/log" 2>&1; then
    echo "fuzz $name: ok ($(grep -o 'DONE.*' "$work/$name/log" | head -1))"
  else
    failed=1
    echo "fuzz $name: FAILED" >&2
    tail -n 40 "$work/$name/log" >&2
    for crash in "$work/$name/crashes/"*; do
      mkdir -p "fuzz-crashes/$name"
      cp "$crash" "fuzz-crashes/$name/"
      echo "  input kept in fuzz-crashes/$name/${crash##*/}: fix the bug, then move it to tests/fuzz/corpus/$name/" >&2
    done
  fi
done
exit $failed
