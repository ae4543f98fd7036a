#!/usr/bin/env bash
# generate.sh — writes the Go code generated from proto/smcrypt/v1/crypto.proto (package
# smcryptv1, import path smcrypt.example/client/smcryptv1, the file's go_package) for one of
# the two ways to build this example (README.md "Go"):
#
#   ./generate.sh                 module mode: the code into ./smcryptv1, then `go mod tidy`
#                                 resolves go.mod's modules (and writes go.sum) through a
#                                 module proxy. protoc-gen-go and protoc-gen-go-grpc from PATH:
#                                   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.34.1
#                                   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.3.0
#   ./generate.sh --gopath DIR    Debian 12, offline GOPATH mode: the code into
#                                 DIR/src/smcrypt.example/client/smcryptv1, made by Debian's
#                                 /usr/bin/protoc-gen-go (v1.28) and /usr/bin/protoc-gen-go-grpc
#                                 (1.0, grpc-go 1.33); then build with
#                                   GO111MODULE=off GOPATH=DIR:/usr/share/gocode go build .
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proto=$here/../../../proto

if [[ ${1:-} == --gopath ]]; then
  [[ $# -eq 2 ]] || { echo "usage: $0 [--gopath DIR]" >&2; exit 2; }
  out=$2/src
  for p in protoc-gen-go protoc-gen-go-grpc; do
    [[ -x /usr/bin/$p ]] || { echo "generate.sh: /usr/bin/$p missing (apt-get install $p)" >&2; exit 1; }
  done
  mkdir -p "$out"
  rm -rf "$out/smcrypt.example/client/smcryptv1"
  # paths=import (the default): the files land at $out/<go_package import path>/. Debian's
  # plugins are named explicitly: a newer one on PATH writes code that gRPC-Go 1.33 rejects.
  protoc -I "$proto" \
    --plugin=protoc-gen-go=/usr/bin/protoc-gen-go --go_out="$out" \
    --plugin=protoc-gen-go-grpc=/usr/bin/protoc-gen-go-grpc --go-grpc_out="$out" \
    smcrypt/v1/crypto.proto
  exit 0
fi
[[ $# -eq 0 ]] || { echo "usage: $0 [--gopath DIR]" >&2; exit 2; }

cd "$here"
# module=: strip the module path, so the files land in ./smcryptv1.
protoc -I "$proto" \
  --go_out=. --go_opt=module=smcrypt.example/client \
  --go-grpc_out=. --go-grpc_opt=module=smcrypt.example/client \
  smcrypt/v1/crypto.proto
go mod tidy
