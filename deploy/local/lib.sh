# lib.sh — helpers of the deploy/local scripts and of the test runners that start smcryptd
# (tests/interop). Sourced, not executed:
#
#   source "$(dirname "$0")/lib.sh"          # deploy/local/*.sh
#
# It defines smcrypt_root, two arrays and the functions below and changes nothing else (no
# `set`, no `cd`, no trap until cleanup_on_exit is called). Messages start with the calling
# script's name.
# shellcheck shell=bash

# The checkout this file belongs to (build_release configures it from any working folder).
smcrypt_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# What the EXIT trap of cleanup_on_exit stops (process ids) and removes (paths).
smcrypt_pids=()
smcrypt_temp=()

# script_name: the calling script's file name without .sh, the prefix of every message.
script_name() { local n=${0##*/}; echo "${n%.sh}"; }

# default_ports: PORT and METRICS_PORT from the environment, else smcryptd's 50051 and 9464.
default_ports() { PORT=${PORT:-50051}; METRICS_PORT=${METRICS_PORT:-9464}; }

# require_free_ports PORT...: exits 1, with a hint, when something listens on 127.0.0.1:PORT.
require_free_ports() {
  local port
  for port in "$@"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$(script_name): port $port on 127.0.0.1 is in use; set PORT=... METRICS_PORT=... to pick others" >&2
      exit 1
    fi
  done
}

# build_release DIR JOBS TARGET...: configures DIR (Release, Ninja, quietly; through ccache
# when it is installed, unless SMCRYPT_CCACHE=0) and builds TARGETs. Without ccache the
# launchers are set empty, so a DIR configured earlier with ccache stops using it.
build_release() {
  local dir=$1 jobs=$2
  local launcher=(-DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER=)
  shift 2
  if [[ "${SMCRYPT_CCACHE:-1}" != "0" ]] && command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$smcrypt_root}"
  fi
  cmake -S "$smcrypt_root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  cmake --build "$dir" --parallel "$jobs" --target "$@"
}

# wait_port LOG PATTERN PID [TENTHS]: prints PORT once LOG says "PATTERN 127.0.0.1:PORT"; if PID exits or TENTHS tenths of a second (default 600) pass first, prints LOG to stderr and returns 1.
wait_port() {
  local log=$1 pattern=$2 pid=$3 tenths=${4:-600} port="" _
  for _ in $(seq 1 "$tenths"); do
    port=$(sed -n "s/.*$pattern 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p" "$log" | head -n 1)
    [[ -n "$port" ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z "$port" ]]; then
    echo "$(script_name): $(basename "$log" .log) (pid $pid) did not start; its log:" >&2
    cat "$log" >&2
    return 1
  fi
  echo "$port"
}

# stop_pids PID...: SIGTERM to each PID still running, then waits for it (SIGKILL after 30 s).
stop_pids() {
  local pid i
  for pid in "$@"; do
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for pid in "$@"; do
    for ((i = 0; i < 300; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}

# cleanup_on_exit: sets the EXIT trap to stop_pids every smcrypt_pids entry and rm -rf every smcrypt_temp entry.
cleanup_on_exit() { trap 'stop_pids "${smcrypt_pids[@]}"; rm -rf "${smcrypt_temp[@]}"' EXIT; }

# write_sm2_key FILE: a fresh SM2 private key in FILE (PKCS#8 PEM, "PRIVATE KEY").
write_sm2_key() { openssl genpkey -algorithm SM2 -out "$1" 2>/dev/null; }

# write_secret_key LABEL BYTES FILE: BYTES random bytes as a PEM block LABEL ("SM4 KEY", "HMAC KEY") in FILE.
write_secret_key() {
  { echo "-----BEGIN $1-----"; openssl rand -base64 "$2"; echo "-----END $1-----"; } >"$3"
}

# lock_keyring DIR: the modes smcryptd accepts for a keyring: DIR 700, its *.pem files 600.
lock_keyring() { chmod 700 "$1"; chmod 600 "$1"/*.pem; }
