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

BUILD_DIR=${BUILD_DIR:-build}
PORT=${PORT:-50051}
METRICS_PORT=${METRICS_PORT:-9464}
OUT_DIR=${OUT_DIR:-$BUILD_DIR/load-report}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target smcryptd smcrypt-load

# A port already in use would leave smcryptd unable to start and the load going to whatever
# holds it; refuse early with a hint instead.
for port in "$PORT" "$METRICS_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "load: port $port on 127.0.0.1 is in use; set PORT=... METRICS_PORT=... to pick others" >&2
    exit 1
  fi
done

log=$(mktemp)
"$BUILD_DIR/server/smcryptd" --listen="127.0.0.1:$PORT" --metrics_listen="127.0.0.1:$METRICS_PORT" \
  >"$log" 2>&1 &
pid=$!
cleanup() {
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid" || true
  fi
  rm -f "$log"
}
trap cleanup EXIT
# Ready once it logs its listening address (our own process, not whatever else).
for _ in $(seq 1 100); do
  kill -0 "$pid" 2>/dev/null || break
  grep -q "listening on 127.0.0.1:$PORT" "$log" && break
  sleep 0.1
done
if ! kill -0 "$pid" 2>/dev/null || ! grep -q "listening on 127.0.0.1:$PORT" "$log"; then
  echo "load: smcryptd did not start; its log:" >&2
  cat "$log" >&2
  exit 1
fi

mkdir -p "$OUT_DIR"
"$BUILD_DIR/clients/smcrypt-load/smcrypt-load" --target "127.0.0.1:$PORT" \
  --metrics-url "http://127.0.0.1:$METRICS_PORT/metrics" \
  --json "$OUT_DIR/report.json" --csv "$OUT_DIR/report.csv" --html "$OUT_DIR/report.html" \
  --chart-dir "$OUT_DIR" "$@"
echo "JSON, CSV, HTML and SVG charts in $OUT_DIR/"
