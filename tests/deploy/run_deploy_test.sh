#!/usr/bin/env bash
# run_deploy_test.sh SRC_ROOT BUILD_DIR SMCRYPTD WORK_DIR — the `deploy` tests.
# Installs the pinned validator (tests/deploy/validate, `npm ci`) into WORK_DIR, then runs
# deploy_test.py.
# Exit 77 (ctest SKIP_RETURN_CODE) only when kubectl, node or npm is absent
# (deploy/local/install-deps.sh installs them).
set -euo pipefail
src=$1 build=$2 smcryptd=$3 work=$4
for bin in kubectl node npm; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "SKIP: $bin not found; the deploy tests need kubectl (Debian kubernetes-client), node and npm"
    exit 77
  fi
done
mkdir -p "$work"
cp "$src/tests/deploy/validate/package.json" "$src/tests/deploy/validate/package-lock.json" \
   "$src/tests/deploy/validate/validate.mjs" "$src/tests/deploy/validate/yaml2json.mjs" "$work/"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
exec python3 "$src/tests/deploy/deploy_test.py" --src "$src" --build "$build" \
  --smcryptd "$smcryptd" --node_dir "$work"
