#!/usr/bin/env bash
# run_node_client.sh SMCRYPTD PROTO_DIR SRC_DIR WORK_DIR [EXAMPLE_DIR] — the Node.js client
# interop test, then (if given) the client example in EXAMPLE_DIR (its own package-lock.json,
# `npm ci` into WORK_DIR/example) against the same server.
#
# Copies package.json, package-lock.json and interop.mjs from SRC_DIR to WORK_DIR, runs
# `npm ci` there when the lock file changed (@grpc/grpc-js, @grpc/proto-loader, sm-crypto,
# sm-crypto-v2 and @hpke/core at the versions pinned by the committed lock file; node_modules
# stays in the build tree), starts a real smcryptd (smcryptd_launch.sh) and runs interop.mjs against it
# with PROTO_DIR loaded directly.
# Exit 77 (ctest SKIP_RETURN_CODE) when node or npm is absent or node is older than 20.
set -euo pipefail
smcryptd=$1 proto=$2 src=$3 work=$4 example=${5:-}
for bin in node npm; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "SKIP: $bin not found; the Node.js client interop test needs Node.js >= 20 and npm"
    exit 77
  fi
done
major=$(node -p 'process.versions.node.split(".")[0]')
if (( major < 20 )); then
  echo "SKIP: node $(node --version) found; the Node.js client interop test needs Node.js >= 20"
  exit 77
fi
# npm_ci DIR: `npm ci` in DIR, again only when its lock file changed since the last install.
npm_ci() {
  if ! cmp -s "$1/package-lock.json" "$1/node_modules/.smcrypt-lock-stamp"; then
    (cd "$1" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
    cp "$1/package-lock.json" "$1/node_modules/.smcrypt-lock-stamp"
  fi
}
mkdir -p "$work"
cp "$src/package.json" "$src/package-lock.json" "$src/interop.mjs" "$work/"
npm_ci "$work"
if [[ -n "$example" ]]; then
  mkdir -p "$work/example"
  cp "$example/package.json" "$example/package-lock.json" "$example/example.mjs" "$work/example/"
  npm_ci "$work/example"
fi

# shellcheck source=smcryptd_launch.sh
source "$(dirname "$0")/smcryptd_launch.sh"
start_smcryptd "$smcryptd" "$work"

cd "$work"
node interop.mjs "$proto"
if [[ -n "$example" ]]; then
  echo "== $example/example.mjs"
  SMCRYPT_PROTO_DIR="$proto" node example/example.mjs "$SMCRYPT_TARGET"
fi
