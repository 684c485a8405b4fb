#!/usr/bin/env bash
# The ssh provider example (examples/private-provider) end to end, the way a team would use
# it: corral installed into a prefix, the plugin built against that installed SDK only,
# registered through the user registry, talking to a real OpenSSH server on 127.0.0.1
# with throwaway host and user keys. The account logged in to is the current user's.
#
#   ssh_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
umask 022

sshd_bin=/usr/sbin/sshd
if [ ! -x "$sshd_bin" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
  echo "ssh test: needs openssh-server and openssh-client (scripts/deps.sh installs them)" >&2
  exit 77  # ctest: skipped
fi

work=$(mktemp -d)
sshd_pid=
cleanup() {
  local rc=$?
  if [ -n "$sshd_pid" ] && kill -0 "$sshd_pid" 2>/dev/null; then
    kill "$sshd_pid" 2>/dev/null || true
    wait "$sshd_pid" 2>/dev/null || true
  fi
  # A failed Ctrl-C check may leave its marked sleeper behind: only this run's match.
  pkill -f "corral-ssh-mark-$$-" 2>/dev/null || true
  if [ "$rc" -ne 0 ] && [ -s "$work/sshd.log" ]; then
    echo "--- sshd log ---" >&2
    tail -n 30 "$work/sshd.log" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  echo "ssh test: FAILED: $*" >&2
  exit 1
}
passed=0
pass() {
  passed=$((passed + 1))
  echo "ok $passed - $* (${SECONDS}s)"
}

# 1. corral installed into a prefix; the example built against that prefix alone.
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
corral=$work/prefix/bin/corral
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$source_dir/examples/private-provider" -B "$work/plugin" -G Ninja "${launcher[@]}" \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# ccache keys on paths and the build folder; both are temporary here, so rebase them.
CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=1 cmake --build "$work/plugin" >/dev/null
ctest --test-dir "$work/plugin" --output-on-failure >/dev/null || fail "the example's unit tests"
pass "example built against the installed SDK; its unit tests pass"

# corral's state and config live in the temp folder; the user registry is there too.
# (Only now: the build above uses the real HOME, where ccache keeps its cache.)
export HOME=$work/home XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config CORRAL_ETC_DIR=$work/etc
unset CORRAL_REGISTRY CORRAL_PROVIDER
mkdir -p "$HOME"

# 2. Throwaway keys (the user key in a folder with a space: paths reach ssh_config quoted)
#    and an sshd of our own on a free loopback port.
keys="$work/key dir"
mkdir -p "$keys" "$work/sshd"
chmod 700 "$keys"
ssh-keygen -q -t ed25519 -N '' -C corral-test-host -f "$work/sshd/host_ed25519"
ssh-keygen -q -t ed25519 -N '' -C corral-test-user -f "$keys/id_ed25519"
cp "$keys/id_ed25519.pub" "$work/sshd/authorized_keys"
# sshd wants its privilege-separation folder when started by root.
if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then mkdir -p /run/sshd && chmod 755 /run/sshd; fi

start_sshd() {
  local port=$1
  cat > "$work/sshd/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $work/sshd/host_ed25519
PidFile $work/sshd/sshd.pid
AuthorizedKeysFile $work/sshd/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
# The keys live below /tmp (world-writable), which StrictModes would refuse.
StrictModes no
LogLevel VERBOSE
EOF
  rm -f "$work/sshd/sshd.pid"
  "$sshd_bin" -D -e -f "$work/sshd/sshd_config" 2>>"$work/sshd.log" &
  sshd_pid=$!
  # Listening once the pid file is written; gone when the port was taken.
  for _ in $(seq 1 50); do
    [ -s "$work/sshd/sshd.pid" ] && return 0
    kill -0 "$sshd_pid" 2>/dev/null || { sshd_pid=; return 1; }
    sleep 0.1
  done
  return 1
}
port=
for _ in 1 2 3 4 5 6 7 8; do
  candidate=$((20000 + RANDOM % 40000))
  if start_sshd "$candidate"; then port=$candidate; break; fi
done
[ -n "$port" ] || fail "sshd did not start"
printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$work/sshd/host_ed25519.pub")" > "$keys/known_hosts"
pass "sshd listens on 127.0.0.1:$port"

# 3. The plugin registered the way a user does it: a file in the user registry.
mkdir -p "$XDG_CONFIG_HOME/corral/providers.d"
printf 'plugins:\n  - path: %s\n' "$work/plugin/libcorral-ssh.so" > "$XDG_CONFIG_HOME/corral/providers.d/ssh.yaml"
remote=$work/remote  # the "remote" lease root: on this machine, so the test can look inside
export CORRAL_SSH_HOST=127.0.0.1 CORRAL_SSH_PORT=$port CORRAL_SSH_USER=$(id -un) \
  CORRAL_SSH_IDENTITY_FILE="$keys/id_ed25519" CORRAL_SSH_KNOWN_HOSTS_FILE="$keys/known_hosts" \
  CORRAL_SSH_REMOTE_ROOT=$remote CORRAL_PROVIDER=ssh
"$corral" providers describe ssh | grep -q CORRAL_SSH_HOST || fail "providers describe ssh"
"$corral" doctor --provider ssh >"$work/doctor.out" 2>&1 || { cat "$work/doctor.out" >&2; fail "doctor"; }
pass "registered through $XDG_CONFIG_HOME/corral/providers.d/ssh.yaml; doctor is happy"

# 4. The whole run contract, as every built-in provider passes it.
"$corral" conformance --provider ssh > "$work/conformance.out" 2>&1 \
  || { cat "$work/conformance.out" >&2; fail "corral conformance --provider ssh"; }
grep -q '^ssh: .* 0 failed' "$work/conformance.out" || { cat "$work/conformance.out" >&2; fail "conformance summary"; }
[ -z "$(ls -A "$remote" 2>/dev/null)" ] || fail "conformance left lease folders: $(ls "$remote")"
pass "corral conformance --provider ssh: $(tail -n1 "$work/conformance.out")"

# The workspace: ordinary files, a subfolder, and names a careless remote shell would
# split, expand or read as options.
ws=$work/ws
mkdir -p "$ws/sub/deep"
echo "from the workspace" > "$ws/hello.txt"
echo "going away" > "$ws/sub/deep/gone.txt"
echo "staying" > "$ws/sub/keep.txt"
echo "also going" > "$ws/gone too.txt"
hostile=( "-n leading dash" "sp ace's \"quoted\" \$(touch PWNED) \`touch PWNED\`" $'tab\there' "semi;colon&amp|pipe" '*' )
for name in "${hostile[@]}"; do printf 'content of %s\n' "$name" > "$ws/$name"; done
cd "$ws"

# 5. Output and exit code: stdout and stderr come back separately and exactly.
set +e
"$corral" run -- sh -c 'cat hello.txt; echo "to stderr" >&2; echo "more stdout"; exit 7' >"$work/out" 2>"$work/err"
rc=$?
set -e
[ "$rc" = 7 ] || { cat "$work/err" >&2; fail "exit code $rc, expected 7"; }
[ "$(cat "$work/out")" = $'from the workspace\nmore stdout' ] || fail "stdout was: $(cat "$work/out")"
[ "$(cat "$work/err")" = "to stderr" ] || fail "stderr was: $(cat "$work/err")"
[ -z "$(ls -A "$remote")" ] || fail "a run without --keep left $(ls "$remote")"
pass "stdout, stderr and exit code 7 come back separately; the lease folder is gone afterwards"

# 6. Hostile file names arrive intact and nothing they hold is executed; argv words too.
"$corral" run -- sh -c 'for f in *; do printf "%s\n" "$f"; done' > "$work/remote-names"
(for f in *; do printf '%s\n' "$f"; done) > "$work/local-names"
diff "$work/local-names" "$work/remote-names" >&2 || fail "file names differ after the sync"
# The names travel as argv words of the command, the contents come back byte for byte.
"$corral" run -- sh -c 'for f do cat -- "$f"; done' sh "${hostile[@]}" > "$work/remote-contents"
cat -- "${hostile[@]}" > "$work/local-contents"
cmp "$work/local-contents" "$work/remote-contents" || fail "file contents differ after the sync"
got=$("$corral" run -- printf '%s|' "it's" '$(echo no)' '`echo no`' '"' '\' '-e' '' 'a  b')
[ "$got" = "it's|\$(echo no)|\`echo no\`|\"|\\|-e||a  b|" ] || fail "argv words changed: $got"
[ ! -e "$ws/PWNED" ] && [ -z "$(find "$remote" "$HOME" -name PWNED 2>/dev/null)" ] || fail "a file name was executed"
pass "hostile file names and argv words reach the host intact, nothing executed"

# 7. The command gets exactly the variables allowed with --env, never corral's own.
export E2B_API_KEY=planted-e2b-secret-5678 ALLOWED_VALUE="it's \$(not run) \"q\" ;|&"
"$corral" run --env ALLOWED_VALUE -- env > "$work/env"
unset E2B_API_KEY
grep -q planted-e2b-secret "$work/env" && fail "corral's secret reached the remote command"
grep -q '^CORRAL_SSH_' "$work/env" && fail "corral's settings reached the remote command"
[ "$(grep '^ALLOWED_VALUE=' "$work/env")" = "ALLOWED_VALUE=$ALLOWED_VALUE" ] || fail "ALLOWED_VALUE did not arrive intact"
pass "the planted secret stays home; the allowed variable arrives intact"

# 8. --keep, then --id: the second run sees what the first made, and files deleted locally
#    since are gone remotely (their emptied folders too); `corral stop` removes the folder.
"$corral" run --keep --lease-output "$work/handle.json" -- sh -c 'echo "made remotely" > made.txt; mkdir -p build && echo o > build/out.o'
lease=$(jq -r .leaseId "$work/handle.json")
sandbox=$(jq -r .sandboxId "$work/handle.json")
[ -d "$remote/$sandbox/workspace" ] || fail "kept lease folder $remote/$sandbox missing"
rm "$ws/sub/deep/gone.txt" "$ws/gone too.txt" "$ws/${hostile[1]}"
out=$("$corral" run --id "$lease" -- sh -c 'cat made.txt build/out.o; ls -a sub; test -e "gone too.txt" && echo still-there; true')
[ "$out" = $'made remotely\no\n.\n..\nkeep.txt' ] || fail "reused lease saw: $out"
[ ! -e "$remote/$sandbox/workspace/sub/deep" ] || fail "the emptied folder sub/deep stayed"
[ ! -e "$remote/$sandbox/workspace/${hostile[1]}" ] || fail "the deleted hostile file stayed"
[ -e "$remote/$sandbox/workspace/${hostile[0]}" ] || fail "a file still here locally was removed"
"$corral" list --remote --provider ssh | grep -q "$sandbox" || fail "list --remote does not show $sandbox"
"$corral" stop --id "$lease"
[ ! -e "$remote/$sandbox" ] || fail "corral stop left $remote/$sandbox"
pass "keep, reuse by id (state kept, deletions synced), list --remote and stop"

# 9. Ctrl-C stops the remote command, not just the local ssh: the marked process (a
#    grandchild of the command) is gone afterwards. With --keep the lease folder stays
#    (so the exec's own stop did it, not the lease's removal); without, it goes too.
interrupt_run() {  # interrupt_run [corral run flags...]: runs a marked sleeper and sends SIGINT
  # The marker is assembled only inside the remote bash ($0 there), so no command line
  # but the sleep's own matches it: not corral's, not ssh's, not the remote wrapper's.
  local mark_id=$$-$RANDOM corral_pid rc
  marker=corral-ssh-mark-$mark_id
  "$corral" run "$@" -- sh -c 'bash -c "$1" "$2" & wait' sh 'exec -a "corral-ssh-mark-$0" sleep 120' "$mark_id" \
    >"$work/int.out" 2>"$work/int.err" &
  corral_pid=$!
  for _ in $(seq 1 100); do pgrep -f "$marker" >/dev/null && break; sleep 0.1; done
  pgrep -f "$marker" >/dev/null || fail "the remote command never started: $(cat "$work/int.err")"
  kill -INT "$corral_pid"
  set +e
  wait "$corral_pid"
  rc=$?
  set -e
  [ "$rc" = 130 ] || fail "corral exited $rc after SIGINT, expected 130: $(cat "$work/int.err")"
  if pgrep -f "$marker" >/dev/null; then fail "the remote command survived Ctrl-C"; fi
}
interrupt_run --keep --lease-output "$work/int-handle.json"
sandbox=$(jq -r .sandboxId "$work/int-handle.json")
[ -d "$remote/$sandbox/workspace" ] || fail "Ctrl-C with --keep removed the lease folder"
"$corral" stop --id "$(jq -r .leaseId "$work/int-handle.json")" >/dev/null 2>&1
interrupt_run
[ -z "$(ls -A "$remote")" ] || fail "Ctrl-C left lease folder(s): $(ls "$remote")"
pass "Ctrl-C stops the remote process group (kept lease: folder stays; else removed)"

# 10. A host key that does not match is refused with exit 77 and a hint naming the file.
cp "$keys/known_hosts" "$work/known_hosts.good"
ssh-keygen -q -t ed25519 -N '' -f "$work/other_host_key"
printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$work/other_host_key.pub")" > "$keys/known_hosts"
set +e
"$corral" run -- true >"$work/hk.out" 2>"$work/hk.err"
rc=$?
set -e
cp "$work/known_hosts.good" "$keys/known_hosts"
[ "$rc" = 77 ] || fail "a changed host key gave exit $rc, expected 77: $(cat "$work/hk.err")"
grep -q "known_hosts" "$work/hk.err" || fail "the host key error does not name the known-hosts file: $(cat "$work/hk.err")"
pass "a changed host key is refused (exit 77) with a hint about the known-hosts file"

echo "ssh test: $passed passed, 0 failed"
