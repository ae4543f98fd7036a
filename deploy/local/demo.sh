#!/usr/bin/env bash
# demo.sh — the README's first command: installs what is missing, builds smcryptd and the
# smcrypt CLI (Release, Ninja), starts smcryptd on 127.0.0.1 with a fresh keyring, and
# exercises the RPC families on real input, printing a short report. smcryptd is stopped
# with SIGTERM at the end (it drains and exits 0); pass --keep-running to leave it up.
#
# Environment: PORT (default 50051), METRICS_PORT (default 9464), BUILD_DIR (default build),
# JOBS (parallel build jobs, default: the number of CPUs).
set -euo pipefail
cd "$(dirname "$0")/../.."
keep_running=0
[ "${1:-}" = "--keep-running" ] && keep_running=1

BUILD_DIR=${BUILD_DIR:-build}
PORT=${PORT:-50051}
METRICS_PORT=${METRICS_PORT:-9464}
JOBS=${JOBS:-$(nproc)}

# A port already in use would leave smcryptd unable to start and the calls below talking to
# whatever holds it; refuse before installing and building, with a hint.
for port in "$PORT" "$METRICS_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "demo: port $port on 127.0.0.1 is in use; set PORT=... METRICS_PORT=... to pick others" >&2
    exit 1
  fi
done

deploy/local/install-deps.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" --parallel "$JOBS" --target smcryptd smcrypt

work=$(mktemp -d)
smcryptd="$BUILD_DIR/server/smcryptd"
export SMCRYPT_TARGET="127.0.0.1:$PORT"
cli() { "$BUILD_DIR/clients/smcrypt/smcrypt" "$@"; }

# A keyring as smcryptd reads it: <key_id>.pem, the PEM label binding the family.
mkdir -p "$work/keys"
openssl genpkey -algorithm SM2 -out "$work/keys/sm2-signing.pem" 2>/dev/null
head -c 16 /dev/urandom | base64 | { echo "-----BEGIN SM4 KEY-----"; cat; echo "-----END SM4 KEY-----"; } \
  > "$work/keys/sm4-data.pem"
chmod 600 "$work/keys"/*.pem

"$smcryptd" --listen="127.0.0.1:$PORT" --metrics_listen="127.0.0.1:$METRICS_PORT" \
  --keys_dir="$work/keys" >"$work/smcryptd.log" 2>&1 &
pid=$!
cleanup() {
  if [ "$keep_running" = 0 ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"; wait "$pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
ready=0
for _ in $(seq 1 100); do
  kill -0 "$pid" 2>/dev/null || break
  if cli info >/dev/null 2>&1; then ready=1; break; fi
  sleep 0.1
done
if [ "$ready" = 0 ] || ! kill -0 "$pid" 2>/dev/null; then
  echo "demo: smcryptd did not start; its log:" >&2
  cat "$work/smcryptd.log" >&2
  exit 1
fi

printf 'The quick brown fox jumps over the lazy dog\n' > "$work/msg.txt"
head -c 5000000 /dev/urandom > "$work/big.bin"

echo "== smcryptd on 127.0.0.1:$PORT (pid $pid), metrics on :$METRICS_PORT"
cli info | sed -n '1,12p'
echo
echo "== SM3 of \"abc\" (GB/T 32905 A.1: 66c7f0f4...8f4ba8e0)"
printf abc | cli hash --alg sm3
echo "== SM3 of a 5 MB file, streamed; OpenSSL says:"
cli hash --alg sm3 "$work/big.bin"
openssl dgst -sm3 -r "$work/big.bin" | cut -d' ' -f1
echo "== SM2 signature with keyring key sm2-signing, verified, then a tampered message"
cli sign --key-id sm2-signing --out "$work/msg.sig" "$work/msg.txt"
cli verify --key-id sm2-signing --sig "$work/msg.sig" "$work/msg.txt"
printf 'tampered\n' > "$work/other.txt"
cli verify --key-id sm2-signing --sig "$work/msg.sig" "$work/other.txt" || true
echo "== SM4-GCM with keyring key sm4-data: encrypt, decrypt"
cli encrypt --alg sm4-gcm --key-id sm4-data --aad demo --out "$work/msg.enc" "$work/msg.txt"
cli decrypt --alg sm4-gcm --key-id sm4-data --aad demo "$work/msg.enc"
echo "== SM2 public-key encryption (C1C3C2) and decryption"
cli pkencrypt --key-id sm2-signing --format raw "$work/msg.txt" > "$work/msg.pke"
cli pkdecrypt --key-id sm2-signing --format raw "$work/msg.pke"
echo "== Hybrid encryption, HPKE-SM2-SM3-SM4GCM (a 5 MB file sealed to keyring key sm2-signing, streamed)"
cli seal --stream --format raw --key-id sm2-signing --info demo --out "$work/big.sealed" "$work/big.bin"
cli open --stream --format raw --key-id sm2-signing --info demo --out "$work/big.opened" "$work/big.sealed"
cmp "$work/big.bin" "$work/big.opened" && echo "opened: identical ($(stat -c %s "$work/big.sealed") bytes sealed)"
echo "== 32 random bytes"
cli random 32
echo
echo "== /metrics: RPCs handled, bytes processed, kernels, self-tests (non-zero series)"
curl -s "http://127.0.0.1:$METRICS_PORT/metrics" |
  grep -E '^(grpc_server_handled_total\{[^}]*smcrypt|smcrypt_bytes_processed_total|smcrypt_kernel_info|smcrypt_selftest_ok|process_resident_memory_bytes)' |
  grep -v ' 0$' || true
if [ "$keep_running" = 1 ]; then
  trap - EXIT
  echo
  echo "smcryptd keeps running (pid $pid); stop it with: kill $pid   (keyring in $work/keys)"
fi
