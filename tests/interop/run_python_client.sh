#!/usr/bin/env bash
# run_python_client.sh SMCRYPTD PROTO_DIR SRC_DIR WORK_DIR [EXAMPLE] — the Python client
# interop test, then (if given) the client example EXAMPLE against the same server.
#
# Generates Python stubs from PROTO_DIR (smcrypt/v1/crypto.proto and grpc/health/v1/health.proto)
# with `protoc` and `grpc_python_plugin` (Debian protobuf-compiler-grpc) into WORK_DIR/gen,
# starts a real smcryptd (smcryptd_launch.sh) and runs SRC_DIR/interop_test.py with Debian's
# /usr/bin/python3, whose python3-grpcio and python3-cryptography are the independent checks;
# then SRC_DIR/envelope_test.py (GenerateDataKey, Rewrap) against the same server.
#
# SMCRYPT_PYTHON overrides the interpreter (default /usr/bin/python3: a pyenv or venv python3
# on PATH lacks the Debian modules). Exit 77 (ctest SKIP_RETURN_CODE) when that interpreter is
# absent. One without grpcio/protobuf/cryptography, or a missing protoc/plugin, is a failure
# naming the package to install (deploy/local/install-deps.sh installs them), never a skip.
set -euo pipefail
smcryptd=$1 proto=$2 src=$3 work=$4 example=${5:-}
python=${SMCRYPT_PYTHON:-/usr/bin/python3}

if [[ ! -x "$python" ]]; then
  echo "SKIP: $python not found; the Python client interop test needs Debian's python3 with" \
       "python3-grpcio and python3-cryptography"
  exit 77
fi
missing=()
"$python" -c 'import grpc' 2>/dev/null || missing+=(python3-grpcio)
"$python" -c 'import google.protobuf' 2>/dev/null || missing+=(python3-protobuf)
"$python" -c 'import cryptography' 2>/dev/null || missing+=(python3-cryptography)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
command -v grpc_python_plugin >/dev/null 2>&1 || missing+=(protobuf-compiler-grpc)
if (( ${#missing[@]} )); then
  echo "FAIL: missing ${missing[*]}; install with deploy/local/install-deps.sh" \
       "(apt-get install ${missing[*]})" >&2
  exit 1
fi

mkdir -p "$work"
rm -rf "$work/gen"
mkdir -p "$work/gen"
plugin=--plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)"
protoc -I "$proto" --python_out="$work/gen" --grpc_python_out="$work/gen" "$plugin" \
  smcrypt/v1/crypto.proto
# health.proto from its own folder: modules health_pb2 / health_pb2_grpc (a generated
# top-level `grpc` package would clash with grpcio's).
protoc -I "$proto/third_party/grpc/health/v1" --python_out="$work/gen" \
  --grpc_python_out="$work/gen" "$plugin" health.proto

# shellcheck source=smcryptd_launch.sh
source "$(dirname "$0")/smcryptd_launch.sh"
start_smcryptd "$smcryptd" "$work"

export PYTHONPATH="$work/gen" PYTHONDONTWRITEBYTECODE=1
"$python" "$src/interop_test.py" -v
"$python" "$src/envelope_test.py" -v
if [[ -n "$example" ]]; then
  echo "== $example"
  "$python" "$example" "$SMCRYPT_TARGET"
fi
