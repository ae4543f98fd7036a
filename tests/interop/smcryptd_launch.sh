# smcryptd_launch.sh — sourced by the interop runners: starts a real smcryptd for a client
# written in another language and stops it when the runner exits.
#
#   start_smcryptd SMCRYPTD WORK_DIR
#
# writes a keyring to WORK_DIR/keys with OpenSSL —
#   sm2.pem    PRIVATE KEY  SM2 (openssl genpkey -algorithm SM2)
#   p256.pem   PRIVATE KEY  EC P-256
#   sm4.pem    SM4 KEY      16 random bytes
#   sm4xts.pem SM4 KEY      32 random bytes (K1 ‖ K2 of SM4-XTS)
#   hmac.pem   HMAC KEY     32 random bytes
# — starts SMCRYPTD --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --keys_dir=WORK_DIR/keys,
# reads the port it chose from its log ("listening on 127.0.0.1:PORT") and exports
# SMCRYPT_TARGET=127.0.0.1:PORT and SMCRYPT_KEYS_DIR. The server's log is WORK_DIR/smcryptd.log
# (printed if start-up fails). An EXIT trap sends SIGTERM and waits for the process.

smcryptd_pid=""

stop_smcryptd() {
  if [[ -n "$smcryptd_pid" ]] && kill -0 "$smcryptd_pid" 2>/dev/null; then
    kill -TERM "$smcryptd_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$smcryptd_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$smcryptd_pid" 2>/dev/null || true
    wait "$smcryptd_pid" 2>/dev/null || true
  fi
  smcryptd_pid=""
}

pem_block() {  # pem_block LABEL BYTES — a PEM block of BYTES random bytes
  echo "-----BEGIN $1-----"
  openssl rand -base64 "$2"
  echo "-----END $1-----"
}

start_smcryptd() {
  local smcryptd=$1 work=$2
  local keys="$work/keys" log="$work/smcryptd.log"
  rm -rf "$keys"
  mkdir -p "$keys"
  openssl genpkey -algorithm SM2 -out "$keys/sm2.pem" 2>/dev/null
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$keys/p256.pem" 2>/dev/null
  pem_block "SM4 KEY" 16 >"$keys/sm4.pem"
  pem_block "SM4 KEY" 32 >"$keys/sm4xts.pem"
  pem_block "HMAC KEY" 32 >"$keys/hmac.pem"
  chmod 600 "$keys"/*.pem  # smcryptd refuses world-readable secret keys

  : >"$log"
  "$smcryptd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --keys_dir="$keys" \
    >>"$log" 2>&1 &
  smcryptd_pid=$!
  trap stop_smcryptd EXIT

  local port=""
  for _ in $(seq 1 300); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
    [[ -n "$port" ]] && break
    if ! kill -0 "$smcryptd_pid" 2>/dev/null; then
      echo "FAIL: smcryptd exited during start-up; its log:" >&2
      cat "$log" >&2
      exit 1
    fi
    sleep 0.1
  done
  if [[ -z "$port" ]]; then
    echo "FAIL: smcryptd did not report its port within 30 s; its log:" >&2
    cat "$log" >&2
    exit 1
  fi
  export SMCRYPT_TARGET="127.0.0.1:$port"
  export SMCRYPT_KEYS_DIR="$keys"
  echo "smcryptd (pid $smcryptd_pid) serving on $SMCRYPT_TARGET, keyring $keys"
}
