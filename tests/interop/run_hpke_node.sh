#!/usr/bin/env bash
# run_hpke_node.sh TOOL SRC_DIR WORK_DIR — the HPKE interop test with @hpke/core.
# Copies package.json, package-lock.json and the script to WORK_DIR, runs `npm ci` there
# (the versions pinned by the committed lock file), then interop.mjs. Exit 77 (ctest
# SKIP_RETURN_CODE) when node or npm is missing.
set -euo pipefail
tool=$1 src=$2 work=$3
for bin in node npm; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "SKIP: $bin not found; the @hpke/core interop test needs Node.js >= 20 and npm"
    exit 77
  fi
done
major=$(node -p 'process.versions.node.split(".")[0]')
if (( major < 20 )); then
  echo "SKIP: node $(node --version) found; the @hpke/core interop test needs Node.js >= 20"
  exit 77
fi
mkdir -p "$work"
cp "$src/package.json" "$src/package-lock.json" "$src/interop.mjs" "$work/"
cd "$work"
npm ci --no-audit --no-fund --loglevel=error
node interop.mjs "$tool"
