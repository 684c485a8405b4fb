#!/usr/bin/env bash
# What the local provider costs on top of running the same command bare, measured in one
# run so the ratios hold on any machine:
#   - per-run overhead: `corral run -- true` (create, sync, jail, destroy) vs `bwrap ... true`;
#   - output throughput: BENCH_MB MiB through `corral run` vs the same command unjailed.
#
#   scripts/bench-local.sh [BUILD_DIR]      BENCH_RUNS=20 BENCH_MB=512 scripts/bench-local.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_RUNS:-20}
mb=${BENCH_MB:-512}
corral=$build/bin/corral
[ -x "$corral" ] || { echo "bench-local: $corral is missing; run scripts/build.sh" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp/home XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config CORRAL_ETC_DIR=$tmp/etc
mkdir -p "$HOME" "$tmp/ws"
for i in $(seq 50); do echo "file $i" > "$tmp/ws/f$i.txt"; done
cd "$tmp/ws"

now() { date +%s%N; }
# Best (smallest) wall time in ms of `runs` runs of the given command.
best_ms() {
  local best=
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(now)
    "$@" >/dev/null
    t1=$(now)
    local ms=$(( (t1 - t0) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}

bare_jail=(bwrap --die-with-parent --unshare-pid --unshare-ipc --unshare-uts --ro-bind /usr /usr
           --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev -- true)
jail_ms=$(best_ms "${bare_jail[@]}")
corral_ms=$(best_ms "$corral" run -- true)
echo "per-run (best of $runs, 50-file workspace):"
echo "  bwrap true:            ${jail_ms} ms"
echo "  corral run -- true:    ${corral_ms} ms   ratio $(awk "BEGIN{printf \"%.1f\", $corral_ms/($jail_ms>0?$jail_ms:1)}")x"

runs=3
plain_ms=$(best_ms sh -c "head -c $((mb * 1024 * 1024)) /dev/zero")
stream_ms=$(best_ms "$corral" run -- head -c $((mb * 1024 * 1024)) /dev/zero)
echo "streaming $mb MiB of output (best of 3):"
echo "  unjailed:              ${plain_ms} ms"
echo "  corral run:            ${stream_ms} ms   $(awk "BEGIN{printf \"%.0f\", $mb*1000/($stream_ms>0?$stream_ms:1)}") MiB/s"
left=$(ls "$XDG_STATE_HOME/corral/local" 2>/dev/null | wc -l)
echo "sandboxes left: $left"
