#!/usr/bin/env bash
# run_fuzzer.sh FUZZER CORPUS SECONDS ARTIFACT_DIR — runs one libFuzzer target for SECONDS
# on a temporary copy of its checked-in seed corpus (new inputs never land in the
# repository). Exit status is the fuzzer's: non-zero on a crash, a sanitizer report, a
# leak, one input running over 60 s, or an abort() on a differential mismatch; the reproducer
# is written to ARTIFACT_DIR (rerun it with `FUZZER ARTIFACT_DIR/crash-...`).
set -euo pipefail
fuzzer=$1 corpus=$2 seconds=$3 artifacts=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/smcrypt-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$artifacts"
if [ -d "$corpus" ]; then cp -r "$corpus"/. "$work"/; fi
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
exec "$fuzzer" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2560 -max_len=65536 \
  -print_final_stats=1 -print_funcs=0 -artifact_prefix="$artifacts/" "$work"
