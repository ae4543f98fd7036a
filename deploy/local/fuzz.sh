#!/usr/bin/env bash
# fuzz.sh — longer fuzzing runs than CI's 20 s per target (tests/fuzz; docs/design.md "Tests
# and CI"). Builds the clang ASan+UBSan build with the fuzzers (as deploy/local/test.sh
# does) and runs each named target, or every target, for SECONDS (default 600) on a
# growing corpus kept in <build>/fuzz-corpus/<target> (seeded from tests/fuzz/corpus;
# the checked-in seeds are never written). Findings land in <build>/fuzz-artifacts/.
# Usage: deploy/local/fuzz.sh [--seconds N] [target ...]
#        e.g. deploy/local/fuzz.sh --seconds 3600 sm2_decrypt rpc
# Environment: ASAN_BUILD_DIR (default build-asan); JOBS parallel fuzzing processes per
# target (default 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=600
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
build=${ASAN_BUILD_DIR:-build-asan}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" \
  -DSMCRYPT_BUILD_BENCH=OFF -DSMCRYPT_SANITIZE=address,undefined -DSMCRYPT_BUILD_FUZZERS=ON >/dev/null
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/*_fuzzer.cc; do t=$(basename "$f" _fuzzer.cc); targets+=("$t"); done
fi
cmake --build "$build" --parallel 2 --target "${targets[@]/%/_fuzzer}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
jobs=()
if [ "${JOBS:-1}" -gt 1 ]; then jobs=(-jobs="$JOBS" -workers="$JOBS"); fi
status=0
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus" "$build/fuzz-artifacts"
  cp -rn "tests/fuzz/corpus/$t/." "$corpus/" 2>/dev/null || true
  echo "fuzz.sh: $t for ${seconds}s (corpus $corpus)"
  "$build/tests/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2560 \
    -max_len=65536 -print_final_stats=1 "${jobs[@]}" \
    -artifact_prefix="$build/fuzz-artifacts/" "$corpus" || { status=1; echo "fuzz.sh: $t FAILED"; }
done
exit $status
