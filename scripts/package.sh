#!/usr/bin/env bash
# Builds the Debian packages corral and corral-dev from a build tree (default build/,
# from scripts/build.sh or scripts/test.sh; the runtime is brought up to date first, the
# test suite is not needed) into BUILD_DIR/packages/ (or OUT_DIR), then checks them with
# lintian and fails on any error. Install with `sudo apt install ./build/packages/corral_*.deb`.
#   scripts/package.sh [BUILD_DIR [OUT_DIR]]
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$source_dir/build}
out=${2:-$build/packages}
umask 022  # the staged files and folders get Debian's 0644/0755 whatever the caller's umask
"$source_dir/scripts/deps.sh" lintian
if [ ! -f "$build/CPackConfig.cmake" ]; then
  [ "$build" = "$source_dir/build" ] || { echo "corral: $build is not a configured build tree (run scripts/build.sh)" >&2; exit 1; }
  "$source_dir/scripts/build.sh"
fi
cmake --build "$build" --target corral-runtime >/dev/null
mkdir -p "$out"
rm -f "$out"/corral_*.deb "$out"/corral-dev_*.deb
# The staging tree under $out/_CPack_Packages is removed afterwards: it holds a second
# copy of everything packaged.
cpack --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1 \
  || { cat "$out/cpack.log" >&2; echo "corral: cpack failed (log above)" >&2; exit 1; }
rm -rf "$out/_CPack_Packages"
debs=("$out"/corral_*.deb "$out"/corral-dev_*.deb)
# --fail-on error: warnings and the tags packaging/debian/*.lintian-overrides explains
# are printed but do not fail; an error does.
lintian --fail-on error --tag-display-limit 0 "${debs[@]}"
printf '%s\n' "${debs[@]}"
