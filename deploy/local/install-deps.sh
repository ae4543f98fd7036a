#!/usr/bin/env bash
# install-deps.sh — installs every Debian 12 package smcrypt needs to build, test and benchmark.
# Idempotent: packages already present are left alone, and apt is asked only when something is missing.
# Usage (as root, or with sudo available): deploy/local/install-deps.sh
set -euo pipefail

packages=(
  git openssl
  # The documentation site (deploy/local/docs.sh, test.sh stage docs): mkdocs build --strict.
  mkdocs mkdocs-material
  libgtest-dev libgmock-dev libbenchmark-dev
  libbotan-2-dev libgcrypt20-dev
  # Sanitizer and fuzz builds (deploy/local/test.sh stages asan and tsan, tests/fuzz):
  # clang with compiler-rt (ASan, UBSan, TSan, libFuzzer) and llvm-symbolizer for reports.
  clang-14 libclang-rt-14-dev llvm-14
  # Constant-time check (tests/ct, label ct): valgrind memcheck, and <valgrind/memcheck.h>
  # for the secret/declassify marks (crypto/common/ct_annotations.h).
  valgrind
  curl
  # deploy/local/load-overhead.sh: GNU time for each client's CPU time.
  time
  # smcrypt-load's HTML report test (tests/clients/check_html_report.py): Debian's
  # Chromium, run headless, lays out the report and measures its charts.
  chromium
  # smcrypt --local's test that a local command makes no socket (tests/clients,
  # smcrypt_cli_local_test LocalCommandsOpenNoSocket): strace.
  strace
  # Python client interop test and examples: Debian's /usr/bin/python3 with these modules.
  python3 python3-grpcio python3-protobuf python3-cryptography
  # Go client example and interop test (clients/examples/go, tests/interop/run_go_client.sh):
  # Go 1.19, gRPC-Go 1.33, protobuf-go 1.28 and genproto (errdetails.ErrorInfo) source in
  # /usr/share/gocode for an offline GOPATH build, and the protoc plugins protoc-gen-go /
  # protoc-gen-go-grpc. The 1-5 package is named so that gRPC-Go's "1-3 | 1-5" dependency is
  # met by github.com/golang/protobuf 1.5 (built on google.golang.org/protobuf), which handles
  # the generated messages.
  golang-go golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev
  golang-google-genproto-dev protoc-gen-go protoc-gen-go-grpc
  # Java client example and interop test (clients/examples/java, tests/interop/java): the JDK,
  # grpc-java's protoc plugin, grpc-java with its runtime (libgrpc-java depends on none of
  # it), netty-tcnative for TLS (Debian's Netty has ALPN only through OpenSSL), javax.annotation
  # for the generated code, and BouncyCastle 1.72 to check the results.
  openjdk-17-jdk-headless protobuf-compiler-grpc-java-plugin
  libgrpc-java libprotobuf-java libgoogle-common-protos-java libguava-java libperfmark-java
  libgoogle-gson-java libnetty-java libnetty-tcnative-java libnetty-tcnative-jni
  libgeronimo-annotation-1.3-spec-java libbcprov-java
  # Container image and tests (deploy/local/image.sh, tests/container, label container):
  # podman with runc (catatonit: the pause process of `podman kube play` pods), debootstrap
  # for the Debian 12 base image, python3-yaml to read the rendered manifests.
  podman runc catatonit debootstrap python3-yaml
  # promtool (tests/deploy/monitoring_test.py, label deploy): check rules, test rules and
  # check metrics. The package also holds the Prometheus server, which is not started
  # (about 19 MB to download, 96 MB installed).
  prometheus
)

# What configures and compiles the programs, and what smcryptd loads at run time: the
# lists the container image's stages install too (deploy/docker/Dockerfile), one package
# a line; ccache there is the compiler cache of every build stage of deploy/local/test.sh
# (~/.cache/ccache, kept between runs; SMCRYPT_CCACHE=0 builds without it).
for list in build runtime; do
  mapfile -t -O "${#packages[@]}" packages \
    < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$(dirname "$0")/../packages/$list.txt")
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js and npm lint the proto with buf (deploy/local/lint-proto.sh); many images ship
# their own, so Debian's are installed only when none is on PATH.
if ! command -v npm >/dev/null 2>&1; then
  for p in nodejs npm; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi

# kubectl renders the Kubernetes manifests in the deploy tests (`kubectl kustomize`); a
# kubectl already on PATH (e.g. a cloud SDK's) is used as it is.
if ! command -v kubectl >/dev/null 2>&1; then
  dpkg-query -W -f='${Status}' kubernetes-client 2>/dev/null | grep -q "install ok installed" \
    || missing+=(kubernetes-client)
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# The arm64 cross build and its tests under qemu (deploy/local/test.sh stage arm64,
# cmake/toolchains/aarch64-linux-gnu.cmake): the cross compiler, qemu-user, and the arm64
# -dev packages through Debian multiarch. Multiarch needs each Multi-Arch: same package at one
# version on both architectures, so apt may upgrade amd64 packages (libssl3, libssl-dev, zlib,
# krb5) to the arm64 versions' when it installs these; they are named together with their
# amd64 counterparts so that it can. Not prometheus-cpp-dev:arm64: it would remove the amd64
# one (its civetweb dependency is not Multi-Arch); the toolchain file uses the shared headers
# with the arm64 runtime libraries instead. SMCRYPT_ARM64_DEPS=0 skips all of this, and so
# does an arm64 host (it builds natively).
arm64_packages=(
  g++-aarch64-linux-gnu qemu-user-static
  libssl-dev:arm64 libabsl-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64
  libgrpc++-dev:arm64 libprotobuf-dev:arm64 libbenchmark-dev:arm64
  libprometheus-cpp-core1.0:arm64 libprometheus-cpp-pull1.0:arm64
)
# On an arm64 host the native packages above are the arm64 ones: nothing to cross-build.
if [ "$(dpkg --print-architecture)" != "amd64" ]; then arm64_packages=(); fi
if [ "${SMCRYPT_ARM64_DEPS:-1}" != "0" ] && [ "${#arm64_packages[@]}" -ne 0 ]; then
  arm64_missing=()
  for p in "${arm64_packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      arm64_missing+=("$p")
    fi
  done
  if [ "${#arm64_missing[@]}" -ne 0 ]; then
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      echo "install-deps: adding the arm64 architecture (dpkg --add-architecture arm64)"
      $SUDO dpkg --add-architecture arm64
    fi
    # The amd64 halves of the Multi-Arch: same -dev packages go into the same transaction.
    missing+=("${arm64_missing[@]}" libssl-dev libssl3 openssl)
  fi
fi

export DEBIAN_FRONTEND=noninteractive
updated=0

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present (and the ${#arm64_packages[@]} of the arm64 build)"
else
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  updated=1
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
