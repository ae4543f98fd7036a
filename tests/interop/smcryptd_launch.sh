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
replica_pids=()

# stop_smcryptd: stops the smcryptd of start_smcryptd and the replicas of start_replicas.
stop_smcryptd() {
  if [[ -n "$smcryptd_pid" ]]; then stop_pids "$smcryptd_pid"; fi
  if ((${#replica_pids[@]})); then stop_pids "${replica_pids[@]}"; fi
  smcryptd_pid=""
  replica_pids=()
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

# start_replicas SMCRYPTD WORK_DIR N: starts N more smcryptd processes (no keyring; port 0,
# logs WORK_DIR/replica-I.log) beside the one of start_smcryptd and exports
# SMCRYPT_REPLICAS (their gRPC addresses, comma-separated: a target for a static resolver)
# and SMCRYPT_REPLICA_METRICS (their /metrics addresses, space-separated). stop_smcryptd
# (the EXIT trap of start_smcryptd) stops them too.
start_replicas() {
  local smcryptd=$1 work=$2 n=$3 i log port metrics targets=() metric_targets=()
  for ((i = 1; i <= n; i++)); do
    log="$work/replica-$i.log"
    : >"$log"
    "$smcryptd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 >>"$log" 2>&1 &
    replica_pids+=($!)
    port=$(wait_port "$log" "listening on" "$!" 300) || exit 1
    metrics=$(wait_port "$log" "metrics on" "$!" 300) || exit 1
    targets+=("127.0.0.1:$port") metric_targets+=("127.0.0.1:$metrics")
  done
  SMCRYPT_REPLICAS=$(IFS=,; echo "${targets[*]}")
  SMCRYPT_REPLICA_METRICS="${metric_targets[*]}"
  export SMCRYPT_REPLICAS SMCRYPT_REPLICA_METRICS
  echo "smcryptd replicas: $SMCRYPT_REPLICAS"
}

# check_spread CALLS: each replica of start_replicas answered at least one of the CALLS SM3
# Hash calls just made, and together all of them (grpc_server_handled_total of Hash, code
# OK, from each /metrics); prints each replica's count. Fails (exit 1) otherwise.
check_spread() {
  local calls=$1 m count total=0 counts=() fail=0
  for m in $SMCRYPT_REPLICA_METRICS; do
    count=$(curl -sf "http://$m/metrics" | awk '
      /^grpc_server_handled_total\{/ && /grpc_method="Hash"/ && /grpc_code="OK"/ { n += $NF }
      END { print n + 0 }')
    counts+=("$m=$count")
    total=$((total + count))
    ((count > 0)) || fail=1
  done
  echo "Hash calls per replica (/metrics): ${counts[*]}"
  if ((fail || total != calls)); then
    echo "FAIL: $calls calls should reach every replica and add up: ${counts[*]}" >&2
    exit 1
  fi
}
