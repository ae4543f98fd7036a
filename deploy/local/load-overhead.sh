#!/usr/bin/env bash
# load-overhead.sh — is smcrypt-load what it measures? Its rate against smcryptd beside the
# rate of a minimal client (bench/rpc_ceiling's smcrypt-rpc-ceiling: gRPC's GenericStub, one
# request serialized once) for the same RPC, request, keyring key, calls in flight and
# connections, against the same smcryptd. On a machine with two or more CPUs smcryptd is
# pinned to CPU 0 and both clients to CPU 1 (taskset), so the clients do not take the
# server's CPU. They alternate for --rounds rounds: the minimal client, smcrypt-load as it
# runs by default (the clients' retry policy on), smcrypt-load --no-retries (one attempt per
# call, as the minimal client sends). Each round prints the rates, the ratios to the
# minimal client, and smcrypt-load's own CPU (getrusage) beside smcryptd's (from /metrics);
# at the end each client's CPU time per call (from /usr/bin/time).
# A temporary keyring (SM2 key "signing") is made and removed, and every process it starts
# is stopped on exit.
#
# Usage: deploy/local/load-overhead.sh [--build DIR] [--rounds N] [--in_flight N]
#                                      [--channels N] [--duration SECONDS] [--warmup SECONDS]
#   --build DIR     the build with smcryptd, smcrypt-load and smcrypt-rpc-ceiling (default build;
#                   built there when missing)
#   defaults: 5 rounds, 64 in flight, 4 channels, 5 s measured after a 2 s warm-up;
#   the RPC is HybridEncrypt HPKE-SM2-SM3-SM4GCM of 512 B (the concurrency scenario's).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=SCRIPTDIR/lib.sh
source deploy/local/lib.sh

build_dir=build
rounds=5
in_flight=64
channels=4
duration=5
warmup=2
while (($#)); do
  case "$1" in
    --build) build_dir=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --in_flight) in_flight=$2; shift 2 ;;
    --channels) channels=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    *) echo "load-overhead: unknown argument $1" >&2; exit 2 ;;
  esac
done

smcryptd=$build_dir/server/smcryptd
load=$build_dir/clients/smcrypt-load/smcrypt-load
minimal=$build_dir/bench/rpc_ceiling/smcrypt-rpc-ceiling
if [[ ! -x "$smcryptd" || ! -x "$load" || ! -x "$minimal" ]]; then
  build_release "$build_dir" "$(nproc)" smcryptd smcrypt-load smcrypt-rpc-ceiling
fi

server_cpu=() client_cpu=()
if [[ "$(nproc)" -ge 2 ]] && command -v taskset >/dev/null; then
  server_cpu=(taskset -c 0)
  client_cpu=(taskset -c 1)
fi

tmp=$(mktemp -d)
smcrypt_temp+=("$tmp")
cleanup_on_exit

mkdir -p "$tmp/keys"
write_sm2_key "$tmp/keys/signing.pem"
lock_keyring "$tmp/keys"

"${client_cpu[@]}" "$minimal" --serve_echo=127.0.0.1:0 2>"$tmp/echo.log" &
smcrypt_pids+=($!)
echo_port=$(wait_port "$tmp/echo.log" "echo listening on" "${smcrypt_pids[-1]}")
"${server_cpu[@]}" "$smcryptd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
  --keys_dir="$tmp/keys" --inline_private_keys=deny --audit_log=none >"$tmp/smcryptd.log" 2>&1 &
smcrypt_pids+=($!)
port=$(wait_port "$tmp/smcryptd.log" "listening on" "${smcrypt_pids[-1]}")
metrics_port=$(wait_port "$tmp/smcryptd.log" "metrics on" "${smcrypt_pids[-1]}")

alg=HPKE-SM2-SM3-SM4GCM
echo "load-overhead: HybridEncrypt $alg 512 B, key_id signing, $in_flight in flight," \
     "$channels connections, ${warmup}s warm-up + ${duration}s, $rounds rounds;" \
     "smcryptd on CPU ${server_cpu[2]:-any}, clients on CPU ${client_cpu[2]:-any}" >&2
printf '%-5s %10s %10s %7s %9s %8s %10s %7s %9s %8s\n' round minimal/s load/s ratio \
  load_cpu srv_cpu noretry/s ratio load_cpu srv_cpu
us_per_call=()
ratios=() ratios_nr=()
for r in $(seq 1 "$rounds"); do
  /usr/bin/time -f "%U %S" -o "$tmp/minimal.time" "${client_cpu[@]}" "$minimal" --target="127.0.0.1:$port" --echo="127.0.0.1:$echo_port" \
    --rpcs=HybridEncrypt --in_flight="$in_flight" --channels="$channels" --rounds=1 \
    --warmup="${warmup}s" --duration="${duration}s" --json="$tmp/minimal.json" \
    >/dev/null 2>"$tmp/minimal.log" || { cat "$tmp/minimal.log" >&2; exit 1; }
  for mode in default no-retries; do
    extra=()
    [[ "$mode" == no-retries ]] && extra=(--no-retries)
    /usr/bin/time -f "%U %S" -o "$tmp/load-$mode.time" "${client_cpu[@]}" "$load" --target="127.0.0.1:$port" --scenario=run --rpc=HybridEncrypt \
      --alg="$alg" --size=512 --concurrency="$in_flight" --connections="$channels" \
      --keys="$alg=signing" --warmup="$warmup" --duration="$duration" --no-progress \
      --metrics-url="http://127.0.0.1:$metrics_port/metrics" --json="$tmp/load-$mode.json" \
      "${extra[@]}" >/dev/null
  done
  us_per_call+=("$(python3 - "$tmp" "$warmup" "$duration" <<'EOF'
import json, sys
tmp, warmup, duration = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
cpu = lambda name: sum(float(x) for x in open(f"{tmp}/{name}.time").read().split()[-2:])
m = json.load(open(f"{tmp}/minimal.json"))["rows"][0]
# The minimal client's calls: its echo and smcryptd phases, each warm-up + measured window.
calls = (m["calls_measured"] + m["echo_calls_measured"]) * (warmup + duration) / duration
out = [1e6 * cpu("minimal") / calls]
for mode in ("default", "no-retries"):
    s = json.load(open(f"{tmp}/load-{mode}.json"))["scenarios"][0]["steps"][0]
    out.append(1e6 * cpu(f"load-{mode}") / (s["requests"] + s["warmup_requests"]))
print(" ".join(f"{v:.1f}" for v in out))
EOF
)")
  line=$(python3 - "$tmp/minimal.json" "$tmp/load-default.json" "$tmp/load-no-retries.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))["rows"][0]
if m["errors"]:
    sys.exit(f"errors: minimal {m['errors_by_code']}")
out = [f"{m['rps']:.0f}"]
for path in sys.argv[2:]:
    s = json.load(open(path))["scenarios"][0]["steps"][0]
    if s["errors"]:
        sys.exit(f"errors: smcrypt-load {s['errors_by_code']}")
    srv = s["server"]["cpu_cores"] if s["server"] else float("nan")
    out += [f"{s['ops_per_second']:.0f}", f"{s['ops_per_second'] / m['rps']:.3f}",
            f"{s['client']['cpu_cores']:.2f}", f"{srv:.2f}"]
print(" ".join(out))
EOF
)
  read -r mr lr ratio lc sc nr nratio nc nsc <<<"$line"
  ratios+=("$ratio")
  ratios_nr+=("$nratio")
  printf '%-5s %10s %10s %7s %9s %8s %10s %7s %9s %8s\n' "$r" "$mr" "$lr" "$ratio" "$lc" "$sc" \
    "$nr" "$nratio" "$nc" "$nsc"
done
echo "client CPU per call, µs (process user+sys over every call it made; the minimal client's"
echo "calls estimated from its measured windows): minimal, smcrypt-load, smcrypt-load --no-retries"
printf '  %s\n' "${us_per_call[@]}"
python3 - "${ratios[*]}" "${ratios_nr[*]}" <<'EOF'
import statistics, sys
for name, arg in (("smcrypt-load", sys.argv[1]), ("smcrypt-load --no-retries", sys.argv[2])):
    v = sorted(float(x) for x in arg.split())
    print(f"ratio {name} / minimal: median {statistics.median(v):.3f}, "
          f"range {v[0]:.3f}-{v[-1]:.3f}")
EOF
