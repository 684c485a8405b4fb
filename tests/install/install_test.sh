#!/usr/bin/env bash
# Installs corral into a temporary prefix, builds the out-of-tree example plugin against
# the installed SDK, registers it through CORRAL_REGISTRY and runs a command with it:
# the path a platform team takes to add its own provider.
set -euo pipefail
build_dir=$1
source_dir=$2
umask 022
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config CORRAL_ETC_DIR=$work/etc
mkdir -p "$HOME"

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/corral"
test -f "$work/prefix/share/corral/providers.yaml"
test -f "$work/prefix/include/corral/plugin_abi.h"

# The installed tree is relocatable: move it and it still finds its plugins.
mv "$work/prefix" "$work/moved"
"$work/moved/bin/corral" providers --json | grep -q '"name":"local","ok":true'

# Teams copy the example: it must build warning-free with their strictest flags.
cmake -S "$source_dir/docs/examples/acme-plugin" -B "$work/acme" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/moved" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/acme" >/dev/null
printf 'plugins:\n  - path: %s\n' "$work/acme/libacme-corral.so" > "$work/acme.yaml"
export CORRAL_REGISTRY=$work/acme.yaml ACME_ROOT=$work/acme-root
mkdir -p "$ACME_ROOT" "$work/ws"
echo "from the workspace" > "$work/ws/hello.txt"

cd "$work/ws"
out=$("$work/moved/bin/corral" run --provider acme -- cat hello.txt)
[ "$out" = "from the workspace" ] || { echo "unexpected output: $out"; exit 1; }
"$work/moved/bin/corral" providers describe acme | grep -q "ACME_ROOT"
# A secret in corral's environment never reaches a private provider's command.
leaked=$(E2B_API_KEY=planted-secret-1234 "$work/moved/bin/corral" run --provider acme -- sh -c 'echo "${E2B_API_KEY:-unset}"; env')
case "$leaked" in *planted-secret-1234*) echo "the host's secret reached the command"; exit 1 ;; esac
[ "$(printf '%s\n' "$leaked" | head -n1)" = "unset" ] || { echo "unexpected output: $leaked"; exit 1; }
set +e
"$work/moved/bin/corral" run --provider acme -- sh -c 'exit 9'
rc=$?
set -e
[ "$rc" = 9 ] || { echo "exit code $rc, expected 9"; exit 1; }
[ -z "$(ls -A "$ACME_ROOT")" ] || { echo "sandbox left behind: $(ls "$ACME_ROOT")"; exit 1; }
# The example is what teams copy: it must honour the whole run contract.
"$work/moved/bin/corral" conformance --provider acme > "$work/conformance.txt" \
  || { cat "$work/conformance.txt"; echo "the acme example fails the conformance kit"; exit 1; }
grep -q '^acme: .* 0 failed' "$work/conformance.txt"
[ -z "$(ls -A "$ACME_ROOT")" ] || { echo "conformance left a sandbox behind: $(ls "$ACME_ROOT")"; exit 1; }

# Without ACME_ROOT the option's default, ${XDG_STATE_HOME}/acme, is where sandboxes live.
where=$(env -u ACME_ROOT "$work/moved/bin/corral" run --provider acme -- pwd)
case "$where" in "$XDG_STATE_HOME"/acme/acme-*/workspace) ;; *) echo "the XDG default root was not used: $where"; exit 1 ;; esac
"$work/moved/bin/corral" providers describe acme | grep -qF '${XDG_STATE_HOME}/acme' \
  || { echo "describe does not show the option's default as written"; exit 1; }

# The same plugin built without CMake, through the installed corral-sdk.pc.
export PKG_CONFIG_PATH=$work/moved/lib/pkgconfig
pkg-config --exists corral-sdk
mkdir -p "$work/acme-pc"
c++ -std=c++20 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden "$source_dir/docs/examples/acme-plugin/acme_provider.cpp" \
  $(pkg-config --cflags --libs corral-sdk) -Wl,--exclude-libs,ALL -Wl,-z,defs -o "$work/acme-pc/libacme-corral.so"
printf 'plugins:\n  - path: %s\n' "$work/acme-pc/libacme-corral.so" > "$work/acme-pc.yaml"
out=$(CORRAL_REGISTRY=$work/acme-pc.yaml "$work/moved/bin/corral" run --provider acme -- cat hello.txt)
[ "$out" = "from the workspace" ] || { echo "pkg-config build: unexpected output: $out"; exit 1; }
CORRAL_REGISTRY=$work/acme-pc.yaml "$work/moved/bin/corral" providers describe acme | grep -q "$work/acme-pc/libacme-corral.so" \
  || { echo "the pkg-config build was not the one loaded"; exit 1; }
echo "install test: 3 passed, 0 failed"
