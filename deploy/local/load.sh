#!/usr/bin/env bash
# load.sh — builds smcryptd and smcrypt-load (Release, Ninja), starts smcryptd on
# 127.0.0.1, runs a short load scenario against it (under two minutes; smcrypt-load's
# default `quick`: 10 s of 512-byte encryptions per scheme, then 1 to 10,000 in flight)
# and prints the report; smcryptd is stopped with SIGTERM at the end.
#
# Environment: BUILD_DIR (default build), PORT (default 50051), METRICS_PORT (default 9464),
# OUT_DIR (default $BUILD_DIR/load-report: report.json, report.csv, report.html and the SVG
# charts).
# Extra arguments go to smcrypt-load, e.g.: deploy/local/load.sh --scenario baseline
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=SCRIPTDIR/lib.sh
source deploy/local/lib.sh

BUILD_DIR=${BUILD_DIR:-build}
default_ports
OUT_DIR=${OUT_DIR:-$BUILD_DIR/load-report}
build_release "$BUILD_DIR" "$(nproc)" smcryptd smcrypt-load

# A port already in use would leave smcryptd unable to start and the load going to whatever
# holds it; refuse early with a hint instead.
require_free_ports "$PORT" "$METRICS_PORT"

tmp=$(mktemp -d)
smcrypt_temp+=("$tmp")
cleanup_on_exit
"$BUILD_DIR/server/smcryptd" --listen="127.0.0.1:$PORT" --metrics_listen="127.0.0.1:$METRICS_PORT" \
  >"$tmp/smcryptd.log" 2>&1 &
smcrypt_pids+=($!)
# Ready once it logs its listening address (our own process, not whatever else).
wait_port "$tmp/smcryptd.log" "listening on" "${smcrypt_pids[-1]}" 100 >/dev/null

mkdir -p "$OUT_DIR"
"$BUILD_DIR/clients/smcrypt-load/smcrypt-load" --target "127.0.0.1:$PORT" \
  --metrics-url "http://127.0.0.1:$METRICS_PORT/metrics" \
  --json "$OUT_DIR/report.json" --csv "$OUT_DIR/report.csv" --html "$OUT_DIR/report.html" \
  --chart-dir "$OUT_DIR" "$@"
echo "JSON, CSV, HTML and SVG charts in $OUT_DIR/"
