#!/usr/bin/env bash
# run.sh [ARGS...] — runs the Java client example built by build.sh (SMCRYPT_JAVA_OUT: its
# OUT_DIR, default clients/examples/java/build). ARGS are Example's:
#   HOST:PORT [--ca CA.pem [--cert CLIENT.pem --key CLIENT.key]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${SMCRYPT_JAVA_OUT:-$here/build}
if [[ ! -f "$out/java-args" ]]; then
  echo "run.sh: $out/java-args not found; run $here/build.sh first" >&2
  exit 1
fi
exec java @"$out/java-args" Example "$@"
