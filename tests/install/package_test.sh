#!/usr/bin/env bash
# The Debian packages as a user gets them: scripts/package.sh builds them from the build
# tree (and fails on a lintian error), dpkg-deb -x unpacks them into a temporary root, and
# there corral runs a command in the local sandbox and lists its providers, and the
# example plugin builds against corral-dev (CMake and a Makefile over pkg-config) and runs.
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
umask 022
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config CORRAL_ETC_DIR=$work/etc
mkdir -p "$HOME"
fail() { echo "package test: $*" >&2; exit 1; }

"$source_dir/scripts/package.sh" "$build_dir" "$work/packages" >"$work/package.log" 2>&1 \
  || { cat "$work/package.log"; fail "scripts/package.sh failed (lintian errors or cpack)"; }
corral_deb=$(echo "$work"/packages/corral_*.deb)
dev_deb=$(echo "$work"/packages/corral-dev_*.deb)
[ -f "$corral_deb" ] && [ -f "$dev_deb" ] || fail "expected corral_*.deb and corral-dev_*.deb, got: $(ls "$work/packages")"

# Depends: bubblewrap (the local provider's jail) plus what dpkg-shlibdeps found in the
# binaries, each with the minimum version the symbols used need.
depends_names() { dpkg-deb -f "$1" Depends | tr ',|' '\n\n' | sed 's/^ *//; s/ .*//'; }
depends=$(dpkg-deb -f "$corral_deb" Depends)
for want in bubblewrap 'libcurl[0-9]+(t64)?' 'libssl[0-9]+(t64)?' 'libarchive[0-9]+(t64)?' 'libnettle[0-9]+(t64)?' 'libstdc\+\+6' libc6; do
  depends_names "$corral_deb" | grep -Eqx "$want" || fail "corral's Depends lacks $want: $depends"
done
grep -Eq 'libc6 \(>= [0-9.]+\)' <<<"$depends" || fail "libc6 has no version from dpkg-shlibdeps: $depends"
for want in rapidjson-dev libcurl4-openssl-dev libcurl-dev libssl-dev; do
  depends_names "$dev_deb" | grep -qx "$want" || fail "corral-dev's Depends lacks $want: $(dpkg-deb -f "$dev_deb" Depends)"
done

# What the README says to run resolves: apt finds every dependency (simulated, no install).
apt-get install -s -q "$corral_deb" "$dev_deb" >"$work/apt.log" 2>&1 \
  || { cat "$work/apt.log"; fail "apt cannot install the packages"; }

# Every entry root-owned, files 0644 or 0755, folders 0755.
bad=$(for deb in "$corral_deb" "$dev_deb"; do dpkg-deb -c "$deb"; done | awk '$2 != "root/root" || $1 !~ /^(-rw-r--r--|-rwxr-xr-x|drwxr-xr-x|lrwxrwxrwx)$/')
[ -z "$bad" ] || fail "wrong owner or mode: $bad"

root=$work/root
dpkg-deb -x "$corral_deb" "$root"
dpkg-deb -x "$dev_deb" "$root"
usr=$root/usr
for f in bin/corral share/corral/providers.yaml lib/corral/plugins/libcorral-local.so \
  share/doc/corral/copyright share/doc/corral/changelog.Debian.gz share/doc/corral-dev/copyright \
  include/corral/plugin_abi.h; do
  [ -e "$usr/$f" ] || fail "missing /usr/$f"
done
# Stripped, and no run path into the build tree (or anywhere).
for elf in "$usr/bin/corral" "$usr"/lib/corral/plugins/*.so "$usr"/libexec/corral/*; do
  file -b "$elf" | grep -q ', stripped' || fail "not stripped: $elf"
  ! readelf -d "$elf" | grep -Eq 'RPATH|RUNPATH' || fail "run path in $elf: $(readelf -d "$elf" | grep -E 'RPATH|RUNPATH')"
done
sdk_archive=$(find "$usr/lib" -name libcorral_sdk.a)
! objdump -h "$sdk_archive" | grep -q '\.debug_info' || fail "the SDK archive keeps its debug info: $sdk_archive"
# The packages hold everything `cmake --install` installs (a rule under a component the
# packages do not take would be missing), and only Debian's documents besides; manual
# pages are gzipped in the packages, as Debian requires.
cmake --install "$build_dir" --prefix "$work/plain" >/dev/null
unzipped_manuals() { sed -E 's#^(\./share/man/.*)\.gz$#\1#' | sort; }
(cd "$work/plain" && find . ! -type d | unzipped_manuals) >"$work/plain.list"
(cd "$usr" && find . ! -type d | unzipped_manuals \
  | grep -vxE '\./share/doc/corral(-dev)?/(copyright|changelog\.Debian\.gz)|\./share/lintian/overrides/corral(-dev)?') >"$work/packaged.list"
diff -u "$work/plain.list" "$work/packaged.list" >"$work/list.diff" \
  || fail "the packages differ from cmake --install (- only installed, + only packaged): $(cat "$work/list.diff")"

# The unpacked corral finds its plugins relative to itself and runs in the real jail.
"$usr/bin/corral" providers --json | grep -q '"name":"local","ok":true' || fail "local is not ok: $("$usr/bin/corral" providers 2>&1)"
"$usr/bin/corral" providers | grep -q '^local' || fail "corral providers does not list local"
mkdir -p "$work/ws"
echo "from the workspace" >"$work/ws/hello.txt"
cd "$work/ws"
"$usr/bin/corral" run -- true || fail "corral run -- true failed"
out=$("$usr/bin/corral" run -- cat hello.txt)
[ "$out" = "from the workspace" ] || fail "local run: unexpected output: $out"

# Runs the acme plugin at $1 through CORRAL_REGISTRY and checks that it is the one loaded.
run_acme() {
  printf 'plugins:\n  - path: %s\n' "$1" >"$work/acme.yaml"
  mkdir -p "$work/acme-root"
  out=$(CORRAL_REGISTRY=$work/acme.yaml ACME_ROOT=$work/acme-root "$usr/bin/corral" run --provider acme -- cat hello.txt)
  [ "$out" = "from the workspace" ] || fail "$1: unexpected output: $out"
  CORRAL_REGISTRY=$work/acme.yaml "$usr/bin/corral" providers describe acme | grep -qF "$1" || fail "$1 was not the plugin loaded"
}
acme_src=$source_dir/docs/examples/acme-plugin

# CMake: find_package(corral) through CMAKE_PREFIX_PATH, from the unpacked corral-dev.
cmake -S "$acme_src" -B "$work/acme-cmake" -G Ninja -DCMAKE_PREFIX_PATH="$usr" \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
grep -q "^corral_DIR:PATH=$usr/lib/" "$work/acme-cmake/CMakeCache.txt" \
  || fail "find_package(corral) did not take the unpacked SDK: $(grep corral_DIR "$work/acme-cmake/CMakeCache.txt")"
cmake --build "$work/acme-cmake" >/dev/null
run_acme "$work/acme-cmake/libacme-corral.so"

# A plain Makefile: c++ $(pkg-config --cflags --libs corral-sdk). The .pc file is
# relocatable (its prefix comes from ${pcfiledir}), so it points into the unpacked root.
export PKG_CONFIG_PATH=$(dirname "$(find "$usr" -name corral-sdk.pc)")
includedir=$(pkg-config --variable=includedir corral-sdk)
libdir=$(pkg-config --variable=libdir corral-sdk)
[ "$(realpath "$includedir")" = "$usr/include" ] && [ "$(realpath "$libdir")" = "$(dirname "$sdk_archive")" ] \
  || fail "corral-sdk.pc does not point into the unpacked root: includedir=$includedir libdir=$libdir"
libs=$(pkg-config --libs corral-sdk)
libs_dir=$(tr ' ' '\n' <<<"$libs" | sed -n 's/^-L//p' | head -n1)
[ -n "$libs_dir" ] && [ "$(realpath "$libs_dir")" = "$(dirname "$sdk_archive")" ] || fail "pkg-config --libs does not point into the unpacked root: $libs"
mkdir -p "$work/acme-make"
cp "$acme_src/acme_provider.cpp" "$acme_src/Makefile" "$work/acme-make/"
make -s -C "$work/acme-make" CXXFLAGS="-O2 -Wall -Wextra -Werror" >/dev/null
run_acme "$work/acme-make/libacme-corral.so"
echo "package test: passed"
