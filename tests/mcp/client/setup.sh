#!/bin/sh
# Installs the pinned MCP TypeScript SDK (package-lock.json) beside a copy of client.mjs in
# DIR, for the mcp_client test (ctest runs this first, as its fixture). `npm ci` runs again
# only when the lock file changed; without npm it says so and the test is skipped.
# usage: setup.sh SOURCE_DIR DIR
set -eu
src=$1
dir=$2
mkdir -p "$dir"
cp "$src/client.mjs" "$src/client_modern.mjs" "$src/provider.mjs" "$src/schema_check.mjs" "$src/package.json" "$dir/"
if ! command -v npm >/dev/null 2>&1; then
  echo "npm is not installed (scripts/deps.sh installs it): the MCP client test will be skipped"
  exit 0
fi
if [ -d "$dir/node_modules" ] && cmp -s "$src/package-lock.json" "$dir/.installed-lock.json"; then
  echo "the MCP TypeScript SDK is installed already"
  exit 0
fi
cp "$src/package-lock.json" "$dir/"
cd "$dir"
rm -f .installed-lock.json
npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json .installed-lock.json
