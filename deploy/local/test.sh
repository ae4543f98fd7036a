#!/usr/bin/env bash
# test.sh — installs what is missing, builds smcrypt (Release, Ninja) and runs every test
# label but `slow`. This is the README's test command and what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/../.."
deploy/local/install-deps.sh
deploy/local/lint-proto.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
cd "$BUILD_DIR"
ctest --output-on-failure --parallel "$(nproc)" -LE slow
