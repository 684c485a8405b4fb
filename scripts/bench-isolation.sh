#!/usr/bin/env bash
# The cost of crash isolation: times `corral run -- head -c 500M /dev/zero > /dev/null`
# with the testbox provider registered in-process and with `isolation: process`, and
# reports the median wall time of each, their ratio and the peak RSS (corral together with
# its helper: GNU time's maxrss includes reaped children).
#   scripts/bench-isolation.sh [BUILD_DIR] [RUNS]     (defaults: build, 5)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${2:-5}
corral=$build/bin/corral
plugin=$build/tests/plugins/libcorral-testbox.so
[[ -x $corral && -f $plugin && -x $build/libexec/corral/corral-plugin-host ]] ||
  { echo "build corral, corral-plugin-host and corral-testbox in $build first" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)" >&2; exit 1; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"
mkdir -p "$root"/{work,state,config/corral/providers.d,etc,home,boxes}
echo bench > "$root/work/file.txt"
export HOME=$root/home XDG_STATE_HOME=$root/state XDG_CONFIG_HOME=$root/config CORRAL_ETC_DIR=$root/etc
export TESTBOX_DIR=$root/boxes NO_COLOR=1
cd "$root/work"

# Runs the benchmark `runs` times with testbox in `mode`; prints "median_seconds max_rss_kb".
measure() {
  local mode=$1 times=() rss=0
  printf 'plugins:\n  - path: %s\n    isolation: %s\n' "$plugin" "$mode" > "$root/config/corral/providers.d/tb.yaml"
  "$corral" run --provider testbox -- true  # warm the spec cache
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f '%e %M' -o "$root/time" "$corral" run --provider testbox -- head -c 500M /dev/zero > /dev/null
    read -r secs kb < "$root/time"
    times+=("$secs")
    ((kb > rss)) && rss=$kb
  done
  printf '%s\n' "${times[@]}" | sort -g | awk -v rss="$rss" '{t[NR]=$1} END {print t[int((NR+1)/2)], rss}'
}

read -r in_t in_rss < <(measure in-process)
read -r iso_t iso_rss < <(measure process)
echo "500 MiB of output through testbox, median of $runs runs:"
printf '  in-process:          %6.2f s  %6.1f MiB/s  peak RSS %d KB\n' "$in_t" "$(echo "500 / $in_t" | bc -l)" "$in_rss"
printf '  isolation: process:  %6.2f s  %6.1f MiB/s  peak RSS %d KB\n' "$iso_t" "$(echo "500 / $iso_t" | bc -l)" "$iso_rss"
printf '  isolated / in-process: %.2fx\n' "$(echo "$iso_t / $in_t" | bc -l)"
