#!/usr/bin/env bash
# generate.sh — writes the Go stubs of proto/smcrypt/v1/crypto.proto into ./smcryptv1
# (package smcryptv1, import path smcrypt.example/client/smcryptv1), then resolves the
# modules (go.sum). Needs protoc, protoc-gen-go and protoc-gen-go-grpc on PATH:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.34.2
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.4.0
# The .proto has no go_package option, so the M flag maps the file to the package.
set -euo pipefail
cd "$(dirname "$0")"
proto=../../../proto
map=Msmcrypt/v1/crypto.proto=smcrypt.example/client/smcryptv1
protoc -I "$proto" \
  --go_out=. --go_opt=module=smcrypt.example/client --go_opt="$map" \
  --go-grpc_out=. --go-grpc_opt=module=smcrypt.example/client --go-grpc_opt="$map" \
  smcrypt/v1/crypto.proto
go mod tidy
