#!/usr/bin/env bash
# test.sh — installs what is missing, checks proto/ with buf (lint-proto.sh: buf lint;
# breaking-proto.sh: buf breaking against the last tag, the merge base with main or HEAD~1),
# builds smcrypt (Release, Ninja) and runs every test label but `slow`. This is the
# README's test command and what .ci/run calls.
#
# Then the sanitizer stages (DESIGN.md "Tests and CI"), each in its own build folder:
#   asan  clang ASan+UBSan (-O1 -g, UB aborts) of everything, fuzzers included:
#         the unit, integration and fuzz labels (each fuzz target 20 s on its corpus),
#         without the *_mask_* reruns of whole suites under CPU-feature masks (every
#         suite already runs each back end this CPU has; the Release stage runs the masks)
#   tsan  clang TSan of the core and the engine (no gRPC: Debian's is not instrumented):
#         the multi-threaded tests (engine, its caches, keyring swaps, worker pool, batch
#         queues, shared core and OpenSSL primitives); the rest of the unit suites are single-threaded
# SMCRYPT_CI_SANITIZERS=0 skips both (quick local runs); CI runs them. Each stage prints
# its wall time. ASAN_BUILD_DIR / TSAN_BUILD_DIR choose the folders.
set -euo pipefail
cd "$(dirname "$0")/../.."

stage_start=0
stage() { stage_start=$SECONDS; echo "test.sh: == $1"; }
stage_done() { echo "test.sh: == $1 took $((SECONDS - stage_start)) s"; }

deploy/local/install-deps.sh
deploy/local/lint-proto.sh
deploy/local/breaking-proto.sh
BUILD_DIR=${BUILD_DIR:-build}
stage "release build"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
stage_done "release build"
stage "release tests"
(cd "$BUILD_DIR" && ctest --output-on-failure --parallel "$(nproc)" -LE slow)
stage_done "release tests"

if [ "${SMCRYPT_CI_SANITIZERS:-1}" = "0" ]; then
  echo "test.sh: SMCRYPT_CI_SANITIZERS=0: sanitizer stages skipped"
  exit 0
fi

# Both sanitizer builds: clang, -O1 -g, no benchmark binary.
sanitizer_flags=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g"
  -DSMCRYPT_BUILD_BENCH=OFF)

ASAN_BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
stage "asan+ubsan build (with fuzzers)"
cmake -S . -B "$ASAN_BUILD_DIR" "${sanitizer_flags[@]}" \
  -DSMCRYPT_SANITIZE=address,undefined -DSMCRYPT_BUILD_FUZZERS=ON
cmake --build "$ASAN_BUILD_DIR" --parallel "$(nproc)"
stage_done "asan+ubsan build (with fuzzers)"
stage "asan+ubsan tests (unit, integration, fuzz)"
(cd "$ASAN_BUILD_DIR" &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --parallel "$(nproc)" -L 'unit|integration|fuzz' -LE slow -E '_mask_')
stage_done "asan+ubsan tests (unit, integration, fuzz)"

TSAN_BUILD_DIR=${TSAN_BUILD_DIR:-build-tsan}
stage "tsan build (core and engine)"
cmake -S . -B "$TSAN_BUILD_DIR" "${sanitizer_flags[@]}" \
  -DSMCRYPT_SANITIZE=thread -DSMCRYPT_BUILD_SERVICE=OFF -DSMCRYPT_BUILD_ENGINE=ON
tsan_tests=(server_engine_concurrency_test server_engine_test server_dynamic_batcher_test
  server_keyring_reload_test openssl_test)
cmake --build "$TSAN_BUILD_DIR" --parallel "$(nproc)" --target "${tsan_tests[@]}"
stage_done "tsan build (core and engine)"
stage "tsan tests"
(cd "$TSAN_BUILD_DIR" &&
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
  ctest --output-on-failure --parallel "$(nproc)" -L unit -LE slow \
    -R '(EngineConcurrencyTest|WorkerPoolTest|DynamicBatcherTest|LruCacheTest|OpenSslConcurrencyTest|KeyringReloadTest)\.|EngineTest\..*Cache')
stage_done "tsan tests"
