# smcryptd_launch.sh — sourced by the interop runners: starts a real smcryptd for a client
# written in another language and stops it when the runner exits (with the helpers of
# deploy/local/lib.sh: key writers, wait_port, stop_pids).
#
#   start_smcryptd SMCRYPTD WORK_DIR
#
# writes a keyring to WORK_DIR/keys with OpenSSL —
#   sm2.pem    PRIVATE KEY  SM2 (openssl genpkey -algorithm SM2)
#   p256.pem   PRIVATE KEY  EC P-256
#   sm4.pem    SM4 KEY      16 random bytes
#   sm4xts.pem SM4 KEY      32 random bytes (K1 ‖ K2 of SM4-XTS)
#   hmac.pem   HMAC KEY     32 random bytes
#   aes256.pem AES KEY      32 random bytes
#   dek.v1.pem, dek.v2.pem  SM4 KEY  16 random bytes each: two versions of key "dek"
# — starts SMCRYPTD --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --keys_dir=WORK_DIR/keys
# --drain_delay=0,
# reads the port it chose from its log ("listening on 127.0.0.1:PORT") and exports
# SMCRYPT_TARGET=127.0.0.1:PORT and SMCRYPT_KEYS_DIR. The server's log is WORK_DIR/smcryptd.log
# (printed if start-up fails). An EXIT trap sends SIGTERM and waits for the process.
# shellcheck shell=bash

# shellcheck source=SCRIPTDIR/../../deploy/local/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/local/lib.sh"

smcryptd_pid=""

stop_smcryptd() {
  if [[ -n "$smcryptd_pid" ]]; then stop_pids "$smcryptd_pid"; fi
  smcryptd_pid=""
}

start_smcryptd() {
  local smcryptd=$1 work=$2
  local keys="$work/keys" log="$work/smcryptd.log"
  rm -rf "$keys"
  mkdir -p "$keys"
  write_sm2_key "$keys/sm2.pem"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$keys/p256.pem" 2>/dev/null
  write_secret_key "SM4 KEY" 16 "$keys/sm4.pem"
  write_secret_key "SM4 KEY" 32 "$keys/sm4xts.pem"
  write_secret_key "HMAC KEY" 32 "$keys/hmac.pem"
  write_secret_key "AES KEY" 32 "$keys/aes256.pem"
  write_secret_key "SM4 KEY" 16 "$keys/dek.v1.pem"
  write_secret_key "SM4 KEY" 16 "$keys/dek.v2.pem"
  lock_keyring "$keys"  # smcryptd refuses world-readable secret keys

  : >"$log"
  # No drain delay: the EXIT trap's SIGTERM waits for no load balancer.
  "$smcryptd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --keys_dir="$keys" \
    --drain_delay=0 >>"$log" 2>&1 &
  smcryptd_pid=$!
  trap stop_smcryptd EXIT

  local port
  port=$(wait_port "$log" "listening on" "$smcryptd_pid" 300) || {
    echo "FAIL: smcryptd did not report its port (it exited, or 30 s passed)" >&2
    exit 1
  }
  export SMCRYPT_TARGET="127.0.0.1:$port"
  export SMCRYPT_KEYS_DIR="$keys"
  echo "smcryptd (pid $smcryptd_pid) serving on $SMCRYPT_TARGET, keyring $keys"
}
