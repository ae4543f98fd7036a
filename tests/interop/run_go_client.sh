#!/usr/bin/env bash
# run_go_client.sh SMCRYPTD EXAMPLE_DIR WORK_DIR — builds the Go client example
# EXAMPLE_DIR (clients/examples/go) with Debian's Go toolchain and Go packages and runs it
# against a real smcryptd (smcryptd_launch.sh); the example checks SHA-256, ECDSA P-256 and
# AES-256-GCM with Go's standard library and exits non-zero on any mismatch; then
# tests/interop/go/envelope (Rewrap, RewrapBatch, GenerateDataKey; AES-GCM by crypto/cipher;
# ListKeys, fingerprints by crypto/sha256) against the same server; then the example with a
# static list of three more replicas (-target A,B,C -calls 60): its round_robin channel must
# reach each of them (check_spread reads every replica's /metrics).
#
# Offline, in GOPATH mode (GO111MODULE=off): the example's go.mod pins module versions that
# Debian does not package, so it is ignored here. Imports resolve in
#   WORK_DIR/gopath          the generated code, smcrypt.example/client/smcryptv1
#   /usr/share/gocode        golang-google-grpc-dev 1.33, golang-google-protobuf-dev 1.28,
#                            golang-github-golang-protobuf-1-5-dev, golang-google-genproto-dev
# The generated code comes from EXAMPLE_DIR/generate.sh --gopath: protoc with Debian's
# /usr/bin/protoc-gen-go (protoc-gen-go, v1.28) and /usr/bin/protoc-gen-go-grpc
# (protoc-gen-go-grpc, 1.0, built from the grpc-go 1.33 source). Everything is written under
# WORK_DIR (the build tree: generated code, GOCACHE, the binary), nothing into the source
# tree; GOPROXY=off, and GOENV=off so that a `go env -w` setting (GOFLAGS=-mod=mod, ...) has
# no say.
#
# Exit 77 (ctest SKIP_RETURN_CODE) when no `go` is on PATH. A missing protoc, plugin or Go
# package is a failure naming the Debian package (deploy/local/install-deps.sh installs them).
set -euo pipefail
smcryptd=$1 example=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v go >/dev/null 2>&1; then
  echo "SKIP: no go on PATH; the Go client interop test needs Debian's golang-go with" \
       "golang-google-grpc-dev, golang-google-protobuf-dev and golang-google-genproto-dev"
  exit 77
fi
gocode=/usr/share/gocode/src
missing=()
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
[[ -x /usr/bin/protoc-gen-go ]] || missing+=(protoc-gen-go)
[[ -x /usr/bin/protoc-gen-go-grpc ]] || missing+=(protoc-gen-go-grpc)
[[ -d $gocode/google.golang.org/grpc/status ]] || missing+=(golang-google-grpc-dev)
[[ -d $gocode/google.golang.org/protobuf/proto ]] || missing+=(golang-google-protobuf-dev)
[[ -d $gocode/google.golang.org/genproto/googleapis/rpc/errdetails ]] \
  || missing+=(golang-google-genproto-dev)
# gRPC-Go 1.33 marshals through github.com/golang/protobuf: 1.5 (built on
# google.golang.org/protobuf) handles the generated APIv2 messages; 1.3 does not.
grep -qs 'google.golang.org/protobuf' "$gocode/github.com/golang/protobuf/proto/proto.go" \
  || missing+=(golang-github-golang-protobuf-1-5-dev)
if (( ${#missing[@]} )); then
  echo "FAIL: missing ${missing[*]}; install with deploy/local/install-deps.sh" \
       "(apt-get install ${missing[*]})" >&2
  exit 1
fi

export GO111MODULE=off GOPATH="$work/gopath:/usr/share/gocode" GOCACHE="$work/gocache"
export GOPROXY=off GOFLAGS='' GOTOOLCHAIN=local GOENV=off
echo "$(go version); GOPATH=$GOPATH"

mkdir -p "$work"
rm -rf "${work:?}/gopath" "${work:?}/bin"
mkdir -p "$work/bin"
bash "$example/generate.sh" --gopath "$work/gopath"
# The example's own directory is built as it is (package main outside GOPATH: allowed).
(cd "$example" && go vet . && go build -o "$work/bin/smcrypt-go-example" .)
(cd "$here/go/envelope" && go vet . && go build -o "$work/bin/smcrypt-go-envelope" .)

# shellcheck source=smcryptd_launch.sh
source "$(dirname "$0")/smcryptd_launch.sh"
start_smcryptd "$smcryptd" "$work"

echo "== $example"
"$work/bin/smcrypt-go-example" -target "$SMCRYPT_TARGET" -ecdsa_key_id p256
echo "== tests/interop/go/envelope"
"$work/bin/smcrypt-go-envelope" -target "$SMCRYPT_TARGET" -keys_dir "$SMCRYPT_KEYS_DIR"
echo "== $example across three replicas (static resolver, round_robin)"
start_replicas "$smcryptd" "$work" 3
GRPC_GO_RETRY=on "$work/bin/smcrypt-go-example" -target "$SMCRYPT_REPLICAS" -calls 60
check_spread 60
