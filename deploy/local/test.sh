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
#
# Between them the container stage (tests/container, label container): the runtime image
# built with podman from the Release build's `cmake --install` tree (deploy/local/image.sh
# --from-install; the Debian 12 base is made with debootstrap when missing), then
# `ctest -L container -LE slow`: the image run as the prod overlay runs it, and `podman kube
# play` of the dev and prod overlays. SMCRYPT_CI_CONTAINER=0 skips it.
#
# Then the arm64 stage (label arm64; README "arm64"): the crypto core, its suites, the CLI
# and smcryptd cross-built for aarch64 (cmake/toolchains/aarch64-linux-gnu.cmake, build
# folder ARM64_BUILD_DIR, default build-arm64), and `ctest -L arm64 -LE slow` there: the
# suites under qemu-aarch64 -cpu max, again with FEAT_SM3/FEAT_SM4 hidden and with every
# arm64 feature hidden, the disassembly check of the arm64 kernels, and the CLI and
# smcryptd under qemu answering the host. SMCRYPT_CI_ARM64=0 skips it.
#
# SMCRYPT_CI_SANITIZERS=0 skips both sanitizer stages (quick local runs); CI runs them.
# Each stage prints its wall time, and a table of every stage's time is printed at the end,
# also when a stage fails. ASAN_BUILD_DIR / TSAN_BUILD_DIR choose the folders.
set -euo pipefail
cd "$(dirname "$0")/../.."

stage_names=() stage_secs=() stage_name="" stage_start=0
stage() { stage_name=$1; stage_start=$SECONDS; echo "test.sh: == $1"; }
stage_done() {
  echo "test.sh: == $stage_name took $((SECONDS - stage_start)) s"
  stage_names+=("$stage_name") stage_secs+=("$((SECONDS - stage_start))") stage_name=""
}
stage_table() {
  local rc=$? i
  echo "test.sh: stage times"
  for i in "${!stage_names[@]}"; do
    printf 'test.sh:   %-48s %6d s\n' "${stage_names[$i]}" "${stage_secs[$i]}"
  done
  if [[ -n $stage_name ]]; then
    printf 'test.sh:   %-48s %6d s  FAILED (exit %d)\n' "$stage_name" "$((SECONDS - stage_start))" "$rc"
  fi
  printf 'test.sh:   %-48s %6d s\n' total "$SECONDS"
}
trap stage_table EXIT

stage "deps"
deploy/local/install-deps.sh
stage_done
stage "proto lint and breaking check"
deploy/local/lint-proto.sh
deploy/local/breaking-proto.sh
stage_done
BUILD_DIR=${BUILD_DIR:-build}
stage "release build"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
stage_done
stage "release tests"
(cd "$BUILD_DIR" && ctest --output-on-failure --parallel "$(nproc)" -LE 'slow|container')
stage_done

if [ "${SMCRYPT_CI_CONTAINER:-1}" != "0" ]; then
  stage "container image (base if missing, from install)"
  # Exit 77: podman cannot run a container on this host; the container tests then skip
  # (ctest SKIP_RETURN_CODE) for the same reason, which they print.
  image_rc=0
  deploy/local/image.sh --from-install "$BUILD_DIR" --tag localhost/smcrypt:container-test \
    || image_rc=$?
  if [ "$image_rc" -ne 0 ] && [ "$image_rc" -ne 77 ]; then exit "$image_rc"; fi
  stage_done
  stage "container tests"
  (cd "$BUILD_DIR" && ctest --output-on-failure -L container -LE slow)
  stage_done
else
  echo "test.sh: SMCRYPT_CI_CONTAINER=0: container stage skipped"
fi

if [ "${SMCRYPT_CI_ARM64:-1}" != "0" ]; then
  ARM64_BUILD_DIR=${ARM64_BUILD_DIR:-build-arm64}
  stage "arm64 cross build (core, suites, CLI, smcryptd)"
  cmake -S . -B "$ARM64_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
  cmake --build "$ARM64_BUILD_DIR" --parallel "$(nproc)"
  stage_done
  stage "arm64 tests under qemu"
  (cd "$ARM64_BUILD_DIR" && ctest --output-on-failure --parallel "$(nproc)" -L arm64 -LE slow)
  stage_done
else
  echo "test.sh: SMCRYPT_CI_ARM64=0: arm64 stage skipped"
fi

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
stage_done
stage "asan+ubsan tests (unit, integration, fuzz)"
(cd "$ASAN_BUILD_DIR" &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --parallel "$(nproc)" -L 'unit|integration|fuzz' -LE slow -E '_mask_')
stage_done

TSAN_BUILD_DIR=${TSAN_BUILD_DIR:-build-tsan}
stage "tsan build (core and engine)"
cmake -S . -B "$TSAN_BUILD_DIR" "${sanitizer_flags[@]}" \
  -DSMCRYPT_SANITIZE=thread -DSMCRYPT_BUILD_SERVICE=OFF -DSMCRYPT_BUILD_ENGINE=ON
tsan_tests=(server_engine_concurrency_test server_engine_test server_dynamic_batcher_test
  server_keyring_reload_test openssl_test)
cmake --build "$TSAN_BUILD_DIR" --parallel "$(nproc)" --target "${tsan_tests[@]}"
stage_done
stage "tsan tests"
(cd "$TSAN_BUILD_DIR" &&
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
  ctest --output-on-failure --parallel "$(nproc)" -L unit -LE slow \
    -R '(EngineConcurrencyTest|WorkerPoolTest|DynamicBatcherTest|LruCacheTest|OpenSslConcurrencyTest|KeyringReloadTest)\.|EngineTest\..*Cache')
stage_done
