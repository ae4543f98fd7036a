#!/usr/bin/env bash
# stress-timing.sh — runs the tests that involve timing N times in a row with busy loops
# beside them, to show they do not depend on the machine's load (docs/contributing.md, "CI stages").
#
#   deploy/local/stress-timing.sh [--runs 10] [--busy 2] [--build build] [--soak-seconds 30]
#                                 [--labels 'integration|interop|deploy']
#
# Each run is `ctest -L LABELS -LE slow` in the build folder plus the soak (label slow)
# shortened to --soak-seconds; --busy shell loops spin on the CPUs meanwhile. Prints one
# line per run (passed, failed, wall time), the overload tests' figures, and the names of
# failed tests (keeping that run's log); exits 1 if any run failed. Works on any build
# folder (Release, or the ASan build with --labels integration).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=SCRIPTDIR/lib.sh
source deploy/local/lib.sh
runs=10 busy=2 build=build soak=30 labels='integration|interop|deploy' 
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --busy) busy=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --soak-seconds) soak=$2; shift 2 ;;
    --labels) labels=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--busy K] [--build DIR] [--soak-seconds S] [--labels L]" >&2; exit 2 ;;
  esac
done
[ -d "$build" ] || { echo "stress-timing.sh: no build folder $build" >&2; exit 2; }
cleanup_on_exit
for _ in $(seq 1 "$busy"); do
  bash -c 'while :; do :; done' &
  smcrypt_pids+=($!)
done
echo "stress-timing.sh: $runs runs in $build with $busy busy loops on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
failed_runs=0
log=$(mktemp)
smcrypt_temp+=("$log")
for i in $(seq 1 "$runs"); do
  start=$SECONDS
  rc=0
  (cd "$build" && ctest --parallel "$(nproc)" -L "$labels" -LE slow -V) >"$log" 2>&1 || rc=$?
  summary=$(grep -E '^[0-9]+% tests passed' "$log" || echo "no summary")
  soak_result=skipped
  if [ -x "$build/tests/server/smcryptd_soak_test" ]; then
    if SMCRYPT_SOAK_WARMUP_SECONDS=10 SMCRYPT_SOAK_SECONDS="$soak" \
        "$build/tests/server/smcryptd_soak_test" >>"$log" 2>&1; then
      soak_result=passed
    else
      soak_result=FAILED; rc=1
    fi
  fi
  echo "run $i: $summary; soak ${soak}s $soak_result; $((SECONDS - start)) s"
  # The overload tests' figures of this run.
  grep -hoE '(round [12]|limits off): .*|stalled streams in flight .*' "$log" | sed 's/^/    /' || true
  if [ $rc -ne 0 ]; then
    failed_runs=$((failed_runs + 1))
    grep -E '\(Failed\)|\(Timeout\)|FAILED|Failure' "$log" | head -20 | sed 's/^/    /'
    cp "$log" "/tmp/stress-timing-run$i.log"
    echo "    log: /tmp/stress-timing-run$i.log"
  fi
done
echo "stress-timing.sh: $((runs - failed_runs)) of $runs runs passed"
[ $failed_runs -eq 0 ]
