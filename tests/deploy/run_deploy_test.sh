#!/usr/bin/env bash
# run_deploy_test.sh SRC_ROOT BUILD_DIR SMCRYPTD WORK_DIR — the `deploy` tests.
# Installs the pinned validator (tests/deploy/validate, `npm ci`) into WORK_DIR, then runs
# deploy_test.py, with Debian's kubectl 1.20 as the second renderer when install-deps.sh
# has unpacked it into $KUBECTL_DEBIAN_DIR (default /opt/smcrypt/kubernetes-client).
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
kubectl_debian=${KUBECTL_DEBIAN_DIR:-/opt/smcrypt/kubernetes-client}/usr/bin/kubectl
[ -x "$kubectl_debian" ] || kubectl_debian=""
exec python3 "$src/tests/deploy/deploy_test.py" --src "$src" --build "$build" \
  --smcryptd "$smcryptd" --node_dir "$work" --kubectl_debian "$kubectl_debian"
