#!/usr/bin/env bash
# Installs the Debian packages corral needs to build, test and run. Installs only what is
# missing, so a machine that has everything needs neither root nor the network.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libcurl4-openssl-dev libssl-dev rapidjson-dev libfmt-dev libyaml-cpp-dev doctest-dev
  libboost-dev libcli11-dev libarchive-dev nettle-dev libcpp-httplib-dev
  bubblewrap curl time jq openssl openssh-server openssh-client
  groff-base zsh fish  # the man pages render, and the completion scripts parse, in the tests
  protobuf-compiler libprotobuf-dev  # the tests' OTLP receiver decodes corral's traces with the official protos
  python3  # the user-journey test's project runs its tests with it, in the sandbox
)
# kubectl, for tests/kubernetes/kubectl_test.cpp: any kubectl already on PATH will do
# (Debian's kubernetes-client would clash with another package's /usr/bin/kubectl).
command -v kubectl >/dev/null || packages+=(kubernetes-client)
# node and npm, for tests/mcp/client (the official MCP TypeScript clients, installed by
# `npm ci` when the tests run): any node already on PATH will do; the 1.x SDK needs 18 (what
# Debian 12 ships), the 2.x client 20 (its test is skipped on an older node).
command -v npm >/dev/null || packages+=(nodejs npm)
packages+=("$@")  # what a script needs besides (scripts/test-sanitized.sh: clang)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "corral: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "corral: run as root or install sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
