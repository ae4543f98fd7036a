#!/usr/bin/env bash
# test.sh — the README's test command and what .ci/run calls. Its stages, in order:
#
#   deps          install-deps.sh installs what is missing
#   proto         buf lint (lint-proto.sh) and buf breaking against the last tag, the merge
#                 base with main or HEAD~1 (breaking-proto.sh)
#   docs          mkdocs build --strict of the documentation site (docs.sh)
#   release       smcrypt (Release, Ninja, BUILD_DIR, default build) and every test label
#                 but `slow` and `container`
#   container     the runtime image built with podman from the Release build's
#                 `cmake --install` tree (deploy/local/image.sh --from-install; the Debian 12
#                 base is made with debootstrap when missing), then `ctest -L container -LE
#                 slow`: the image run as the prod overlay runs it, `podman kube play` of
#                 the dev and prod overlays and of three dev replicas under one round_robin
#                 load, and the image built from source (container_from_source_test: the
#                 Dockerfile's build stage, through ccache in SMCRYPT_IMAGE_CCACHE).
#                 SMCRYPT_CI_CONTAINER=0 skips it.
#   arm64         (label arm64; docs/backends.md, "arm64") the crypto core, its suites, the CLI and
#                 smcryptd cross-built for aarch64 (cmake/toolchains/aarch64-linux-gnu.cmake,
#                 ARM64_BUILD_DIR, default build-arm64), and `ctest -L arm64 -LE slow` there:
#                 the suites under qemu-aarch64 -cpu max, again with FEAT_SM3/FEAT_SM4 hidden
#                 and with every arm64 feature hidden, the disassembly check of the arm64
#                 kernels, and the CLI and smcryptd under qemu answering the host.
#                 SMCRYPT_CI_ARM64=0 skips it.
#   asan          (docs/design.md "Tests and CI") clang ASan+UBSan (-O1 -g, UB aborts), fuzzers
#                 included: the unit, integration and fuzz labels (each fuzz target 20 s on
#                 its corpus), without the *_mask_* reruns of whole suites under CPU-feature
#                 masks (every suite already runs each back end this CPU has; the Release
#                 stage runs the masks). ASAN_BUILD_DIR, default build-asan.
#   tsan          clang TSan of the core and the engine (no gRPC: Debian's is not
#                 instrumented): the multi-threaded tests (engine, its caches, keyring swaps,
#                 worker pool, batch queues, shared core and OpenSSL primitives); the rest of
#                 the unit suites are single-threaded. TSAN_BUILD_DIR, default build-tsan.
#   SMCRYPT_CI_SANITIZERS=0 skips both sanitizer stages (quick local runs); CI runs them.
#
# Each build stage builds what its tests need, not `all` (stage-targets.py: the GoogleTest
# executables its labels can pick, and the programs the other selected tests start; the
# Release stage also what `cmake --install` copies); the tsan stage builds the five
# executables its -R picks from.
#
# ccache: every build stage compiles through ccache when it is installed (SMCRYPT_CCACHE=0:
# without). The cache is ccache's default folder (CCACHE_DIR overrides it) and persists
# between runs, which is where the time goes: the four build folders use four compilers or
# flag sets (gcc -O3; clang ASan+UBSan+fuzzer coverage; clang TSan; the aarch64 gcc), so
# no object is shared between stages within one run, and protoc's output, regenerated in
# each build folder, hits only for the same compiler and flags. CCACHE_BASEDIR is this
# checkout, so a clone in another folder hits too (ccache's preprocessor mode), except the
# sources that use a compile definition holding an absolute path (SMCRYPT_TESTDATA_DIR,
# SMCRYPTD_PATH, ...). The cache is capped at 2 GB (CCACHE_MAXSIZE or ccache.conf's
# max_size win); one run stores a few hundred MB (the tsan build: 22 MB).
#
# Each stage prints its wall time and, when it compiled, its ccache hits and misses; a table
# of every stage's time and hit rate is printed at the end, also when a stage fails.
set -euo pipefail
cd "$(dirname "$0")/../.."

# ccache (SMCRYPT_CCACHE=0: off) is every build stage's compiler launcher. The cache is
# ccache's own folder (CCACHE_DIR, default ~/.cache/ccache), so it persists between runs on
# one machine; CCACHE_BASEDIR is this checkout, so a clone in another folder hits the same
# entries (see "ccache" above for what does not, and for the size cap).
ccache_on=0
launcher_flags=(-DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER=)
# After the deps stage, which installs ccache.
ccache_setup() {
  if [ "${SMCRYPT_CCACHE:-1}" != "0" ] && command -v ccache >/dev/null 2>&1; then
    ccache_on=1
    export CCACHE_BASEDIR=$PWD
    # The size cap: 2 GB, room for several runs, unless CCACHE_MAXSIZE or ccache.conf set one.
    if ccache --show-config | grep '^(default) max_size ' >/dev/null; then export CCACHE_MAXSIZE=2G; fi
    launcher_flags=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    ccache --zero-stats >/dev/null
    echo "test.sh: ccache $(ccache --version | head -n 1 | awk '{print $3}'), cache $(ccache --get-config cache_dir), max $(ccache --get-config max_size), base $CCACHE_BASEDIR"
  elif [ "${SMCRYPT_CCACHE:-1}" != "0" ]; then
    echo "test.sh: ccache not found: builds without it (deploy/local/install-deps.sh installs it)"
  fi
}
# Cache hits and misses since the counters were zeroed: "hits misses".
ccache_counts() {
  if [ "$ccache_on" = 1 ]; then
    ccache --print-stats | awk -F '\t' '
      $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
      $1 == "cache_miss" { m += $2 }
      END { print h + 0, m + 0 }'
  else
    echo "0 0"
  fi
}

stage_names=() stage_secs=() stage_cache=() stage_name="" stage_start=0 stage_counts="0 0"
stage() {
  stage_name=$1 stage_start=$SECONDS stage_counts=$(ccache_counts)
  echo "test.sh: == $1"
}
# The stage's ccache line: "ccache: H hits, M misses (P% hit)", "-" when it compiled nothing.
stage_ccache() {
  local h0 m0 h1 m1 h m
  read -r h0 m0 <<<"$stage_counts"
  read -r h1 m1 <<<"$(ccache_counts)"
  h=$((h1 - h0)) m=$((m1 - m0))
  if [ $((h + m)) -eq 0 ]; then echo "-"; else echo "$h hits, $m misses ($((100 * h / (h + m)))% hit)"; fi
}
stage_done() {
  local cache
  cache=$(stage_ccache)
  if [ "$cache" != "-" ]; then echo "test.sh: == $stage_name ccache: $cache"; fi
  echo "test.sh: == $stage_name took $((SECONDS - stage_start)) s"
  stage_names+=("$stage_name") stage_secs+=("$((SECONDS - stage_start))") stage_cache+=("$cache")
  stage_name=""
}
stage_table() {
  local rc=$? i
  echo "test.sh: stage times (ccache: this stage's compiler cache hits and misses)"
  for i in "${!stage_names[@]}"; do
    printf 'test.sh:   %-48s %6d s  %s\n' "${stage_names[$i]}" "${stage_secs[$i]}" "${stage_cache[$i]}"
  done
  if [[ -n $stage_name ]]; then
    printf 'test.sh:   %-48s %6d s  FAILED (exit %d)\n' "$stage_name" "$((SECONDS - stage_start))" "$rc"
  fi
  printf 'test.sh:   %-48s %6d s\n' total "$SECONDS"
  if [ "$ccache_on" = 1 ]; then echo "test.sh: ccache: $(ccache -s | grep -E '^ *(Hits|Misses|Cache size)' | tr -s ' ' | paste -sd ';')"; fi
}
trap stage_table EXIT

# build_for_tests DIR [--install] -- CTEST_SELECTION...: builds in DIR what the tests that
# selection picks need (deploy/local/stage-targets.py: the GoogleTest executables the
# selection's labels can pick, the programs and files the other tests' command lines name,
# with --install what `cmake --install` copies). A test whose program is missing fails
# ("Could not find executable").
build_for_tests() {
  local dir=$1 list targets=()
  shift
  list=$(deploy/local/stage-targets.py "$dir" "$@")
  mapfile -t targets <<<"$list"
  echo "test.sh: building ${#targets[@]} targets for ctest ${*}"
  cmake --build "$dir" --parallel "$(nproc)" --target "${targets[@]}"
}

stage "deps"
deploy/local/install-deps.sh
stage_done
ccache_setup
stage "proto lint and breaking check"
deploy/local/lint-proto.sh
deploy/local/breaking-proto.sh
stage_done
stage "docs (mkdocs build --strict)"
deploy/local/docs.sh
stage_done
BUILD_DIR=${BUILD_DIR:-build}
release_tests=(-LE 'slow|container')
container_tests=(-L container -LE slow)
stage "release build"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher_flags[@]}"
# The release tests, the container tests, and what the container image installs.
build_for_tests "$BUILD_DIR" --install -- "${release_tests[@]}"
build_for_tests "$BUILD_DIR" -- "${container_tests[@]}"
stage_done
stage "release tests"
(cd "$BUILD_DIR" && ctest --output-on-failure --parallel "$(nproc)" "${release_tests[@]}")
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
  (cd "$BUILD_DIR" && ctest --output-on-failure "${container_tests[@]}")
  stage_done
else
  echo "test.sh: SMCRYPT_CI_CONTAINER=0: container stage skipped"
fi

if [ "${SMCRYPT_CI_ARM64:-1}" != "0" ]; then
  ARM64_BUILD_DIR=${ARM64_BUILD_DIR:-build-arm64}
  arm64_tests=(-L arm64 -LE slow)
  stage "arm64 cross build (core, suites, CLI, smcryptd)"
  cmake -S . -B "$ARM64_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake "${launcher_flags[@]}"
  build_for_tests "$ARM64_BUILD_DIR" -- "${arm64_tests[@]}"
  stage_done
  stage "arm64 tests under qemu"
  (cd "$ARM64_BUILD_DIR" && ctest --output-on-failure --parallel "$(nproc)" "${arm64_tests[@]}")
  stage_done
else
  echo "test.sh: SMCRYPT_CI_ARM64=0: arm64 stage skipped"
fi

if [ "${SMCRYPT_CI_SANITIZERS:-1}" = "0" ]; then
  echo "test.sh: SMCRYPT_CI_SANITIZERS=0: sanitizer stages skipped"
  exit 0
fi

# Both sanitizer builds: clang, -O1 -g, no benchmark binary. With ccache, the debug info
# names this checkout as "." (-fdebug-prefix-map), so that its objects do not depend on the
# checkout's folder and a clone elsewhere hits the same cache entries.
debug_flags="-O1 -g"
if [ "$ccache_on" = 1 ]; then debug_flags+=" -fdebug-prefix-map=$PWD=."; fi
sanitizer_flags=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$debug_flags" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$debug_flags"
  -DSMCRYPT_BUILD_BENCH=OFF "${launcher_flags[@]}")

ASAN_BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
asan_tests=(-L 'unit|integration|fuzz' -LE slow -E '_mask_')
stage "asan+ubsan build (with fuzzers)"
cmake -S . -B "$ASAN_BUILD_DIR" "${sanitizer_flags[@]}" \
  -DSMCRYPT_SANITIZE=address,undefined -DSMCRYPT_BUILD_FUZZERS=ON
build_for_tests "$ASAN_BUILD_DIR" -- "${asan_tests[@]}"
stage_done
stage "asan+ubsan tests (unit, integration, fuzz)"
(cd "$ASAN_BUILD_DIR" &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure --parallel "$(nproc)" "${asan_tests[@]}")
stage_done

TSAN_BUILD_DIR=${TSAN_BUILD_DIR:-build-tsan}
stage "tsan build (core and engine)"
cmake -S . -B "$TSAN_BUILD_DIR" "${sanitizer_flags[@]}" \
  -DSMCRYPT_SANITIZE=thread -DSMCRYPT_BUILD_SERVICE=OFF -DSMCRYPT_BUILD_ENGINE=ON
# The five executables that hold the multi-threaded tests the -R below picks (their other
# tests are not run here; the suites not built are single-threaded).
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
