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
# shellcheck source=SCRIPTDIR/lib.sh
source deploy/local/lib.sh
keep_running=0
[ "${1:-}" = "--keep-running" ] && keep_running=1

BUILD_DIR=${BUILD_DIR:-build}
default_ports
JOBS=${JOBS:-$(nproc)}

# A port already in use would leave smcryptd unable to start and the calls below talking to
# whatever holds it; refuse before installing and building, with a hint.
require_free_ports "$PORT" "$METRICS_PORT"

deploy/local/install-deps.sh
build_release "$BUILD_DIR" "$JOBS" smcryptd smcrypt

work=$(mktemp -d)
smcrypt_temp+=("$work")
cleanup_on_exit
smcryptd="$BUILD_DIR/server/smcryptd"
export SMCRYPT_TARGET="127.0.0.1:$PORT"
cli() { "$BUILD_DIR/clients/smcrypt/smcrypt" "$@"; }

# A keyring as smcryptd reads it: <key_id>.pem, the PEM label binding the family.
mkdir -p "$work/keys"
write_sm2_key "$work/keys/sm2-signing.pem"
write_secret_key "SM4 KEY" 16 "$work/keys/sm4-data.pem"
lock_keyring "$work/keys"

"$smcryptd" --listen="127.0.0.1:$PORT" --metrics_listen="127.0.0.1:$METRICS_PORT" \
  --keys_dir="$work/keys" >"$work/smcryptd.log" 2>&1 &
pid=$!
smcrypt_pids+=("$pid")
# Ready once it logs its listening address (our own process, not whatever else).
wait_port "$work/smcryptd.log" "listening on" "$pid" 100 >/dev/null

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
