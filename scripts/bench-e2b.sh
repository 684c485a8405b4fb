#!/usr/bin/env bash
# Streaming throughput of `corral run --provider e2b` against a raw curl of the same
# process stream, both from the stand-in E2B on 127.0.0.1, with peak memory of each.
#
#   scripts/bench-e2b.sh [BUILD_DIR]        (default: build)
#   BENCH_MB=512 BENCH_RUNS=3 scripts/bench-e2b.sh
#
# The command prints BENCH_MB MiB of zeros. corral decodes the Connect envelopes, the
# JSON events and the base64 and writes the bytes to stdout; curl only downloads the
# same envelopes. Ratio = curl's time / corral's exec time (1.00 = as fast as raw curl).
# Best of BENCH_RUNS runs each; peak memory is the largest MaxRSS seen.
set -euo pipefail
cd "$(dirname "$0")/.."

build=$(cd "${1:-build}" && pwd)
mb=${BENCH_MB:-512}
runs=${BENCH_RUNS:-3}
bytes=$((mb * 1024 * 1024))
corral=$build/bin/corral
standin=$build/tests/e2b-standin
for f in "$corral" "$standin"; do
  [ -x "$f" ] || { echo "bench-e2b: $f is missing; build it (ninja -C $build corral corral-e2b e2b-standin)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench-e2b: /usr/bin/time is missing; install it: apt-get install time" >&2; exit 1; }
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "bench-e2b: $tool is missing; install it: apt-get install $tool" >&2; exit 1; }
done

tmp=$(mktemp -d)
standin_pid=
cleanup() {
  [ -n "$standin_pid" ] && kill "$standin_pid" 2>/dev/null && wait "$standin_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

key="bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
"$standin" --key "$key" >"$tmp/standin.out" 2>&1 &
standin_pid=$!
for _ in $(seq 100); do grep -q E2B_API_URL "$tmp/standin.out" && break; sleep 0.05; done
api_url=$(sed -n 's/.*E2B_API_URL=\([^ ]*\).*/\1/p' "$tmp/standin.out")
sandbox_url=$(sed -n 's/.*E2B_SANDBOX_URL=\([^ ]*\).*/\1/p' "$tmp/standin.out")
[ -n "$api_url" ] || { echo "bench-e2b: the stand-in did not start:" >&2; cat "$tmp/standin.out" >&2; exit 1; }

# A hermetic corral user and a one-file workspace.
mkdir -p "$tmp/home" "$tmp/state" "$tmp/config" "$tmp/etc" "$tmp/work"
echo "bench" >"$tmp/work/README"
export HOME=$tmp/home XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config CORRAL_ETC_DIR=$tmp/etc NO_COLOR=1
export E2B_API_KEY=$key E2B_API_URL=$api_url E2B_SANDBOX_URL=$sandbox_url

# Seconds and MaxRSS (KiB) out of a /usr/bin/time -v report.
wall_of() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$1"; }
rss_of() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"; }

best_corral= best_curl= rss_corral=0 rss_curl=0 wall_corral=
for run in $(seq "$runs"); do
  # corral: create, sync, stream, delete; the handle's exec timing is the stream alone.
  (cd "$tmp/work" && /usr/bin/time -v -o "$tmp/time.corral" "$corral" run --provider e2b \
      --lease-output "$tmp/handle.json" -- head -c "$bytes" /dev/zero >"$tmp/out.corral")
  got=$(stat -c %s "$tmp/out.corral")
  [ "$got" -eq "$bytes" ] || { echo "bench-e2b: corral delivered $got bytes, expected $bytes" >&2; exit 1; }
  exec_s=$(jq -r '.timingsMs.exec / 1000' "$tmp/handle.json")
  rss=$(rss_of "$tmp/time.corral"); [ "$rss" -gt "$rss_corral" ] && rss_corral=$rss
  if [ -z "$best_corral" ] || awk "BEGIN { exit !($exec_s < $best_corral) }"; then
    best_corral=$exec_s wall_corral=$(wall_of "$tmp/time.corral")
  fi

  # curl: the same Start call on a sandbox made by hand, body to /dev/null.
  created=$(curl -sf -X POST "$api_url/sandboxes" -H "X-API-Key: $key" -H 'Content-Type: application/json' \
    -d '{"templateID":"base","timeout":600,"secure":true}')
  sid=$(jq -r .sandboxID <<<"$created")
  token=$(jq -r .envdAccessToken <<<"$created")
  payload="{\"process\":{\"cmd\":\"head\",\"args\":[\"-c\",\"$bytes\",\"/dev/zero\"]},\"stdin\":false}"
  len=${#payload}
  printf "\\x00\\x$(printf %02x $((len >> 24 & 255)))\\x$(printf %02x $((len >> 16 & 255)))\\x$(printf %02x $((len >> 8 & 255)))\\x$(printf %02x $((len & 255)))%s" \
    "$payload" >"$tmp/start.body"
  /usr/bin/time -v -o "$tmp/time.curl" curl -sf -X POST "$sandbox_url/process.Process/Start" \
    -H "E2b-Sandbox-Id: $sid" -H 'E2b-Sandbox-Port: 49983' -H "X-Access-Token: $token" \
    -H 'Content-Type: application/connect+json' -H 'Connect-Protocol-Version: 1' \
    --data-binary @"$tmp/start.body" -o /dev/null -w '%{size_download}\n' >"$tmp/curl.size"
  curl -sf -X DELETE "$api_url/sandboxes/$sid" -H "X-API-Key: $key" >/dev/null
  wire=$(cat "$tmp/curl.size")
  curl_s=$(wall_of "$tmp/time.curl")
  rss=$(rss_of "$tmp/time.curl"); [ "$rss" -gt "$rss_curl" ] && rss_curl=$rss
  if [ -z "$best_curl" ] || awk "BEGIN { exit !($curl_s < $best_curl) }"; then best_curl=$curl_s; fi
  echo "run $run: corral exec ${exec_s}s, raw curl ${curl_s}s" >&2
done

left=$(curl -sf "$api_url/v2/sandboxes" -H "X-API-Key: $key" | jq length)
awk -v mb="$mb" -v wire="$wire" -v c="$best_corral" -v w="$wall_corral" -v k="$best_curl" \
    -v rc="$rss_corral" -v rk="$rss_curl" -v left="$left" 'BEGIN {
  printf "payload:            %d MiB of command output (%.0f MiB on the wire as Connect JSON envelopes)\n", mb, wire / 1048576
  printf "corral run (exec):  %7.2f s  %8.1f MiB/s   (whole run incl. create/sync/delete: %.2f s)\n", c, mb / c, w
  printf "raw curl:           %7.2f s  %8.1f MiB/s\n", k, mb / k
  printf "ratio:              %7.2f   (raw curl time / corral time; 1.00 = as fast as curl)\n", k / c
  printf "peak memory:        corral %.1f MiB, curl %.1f MiB (MaxRSS)\n", rc / 1024, rk / 1024
  printf "sandboxes left:     %d\n", left
}'
