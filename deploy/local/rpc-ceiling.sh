#!/usr/bin/env bash
# rpc-ceiling.sh — smcryptd's per-call cost against the gRPC ceiling (bench/rpc_ceiling):
# builds smcryptd and smcrypt-rpc-ceiling (Release, Ninja, in build/), makes a temporary
# keyring (an SM2 key pair "signing", an SM4 key "data"), starts the bare gRPC echo server
# and smcryptd on free loopback ports (smcryptd with --keys_dir and --audit_log=none,
# otherwise its defaults), runs the client and prints its markdown table; everything it
# started is stopped and the keyring removed on exit.
#
# Usage: deploy/local/rpc-ceiling.sh [--build DIR] [--smcryptd PATH] [--audit_log FILE]
#                                    [--compare_audit FILE] [--compare_rounds N]
#                                    [--out DIR] [--label TEXT] [-- client flags...]
#   --build DIR      use the binaries already built in DIR (no build)
#   --smcryptd PATH  measure this smcryptd instead (e.g. a baseline commit's build)
#   --audit_log FILE smcryptd writes its audit log there (to see what it costs Sign)
#   --compare_audit FILE  the audit's cost: a second smcryptd writes its audit log to
#                    FILE while the first has none; N rounds (--compare_rounds, default 5)
#                    each run the client once (--rounds=1) against each, in alternating
#                    order, and the rate with the audit on over the rate with it off is
#                    printed per round and per RPC and in-flight count (median, min, max)
#   --out DIR        where table.md and report.json go (default: DIR/rpc-ceiling)
#   --label TEXT     the report's name for what is measured (default: the smcryptd path)
# Other arguments go to the client, e.g. --rpcs=Hash,Sign --in_flight=1,64 --rounds=5
# --big_in_flight=20000 --big_channels=64 (smcrypt-rpc-ceiling --help lists them).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=SCRIPTDIR/lib.sh
source deploy/local/lib.sh

build_dir=""
smcryptd=""
audit_log="none"
compare_audit=""
compare_rounds=5
out_dir=""
label=""
client_args=()
while (($#)); do
  case "$1" in
    --build) build_dir=$2; shift 2 ;;
    --build=*) build_dir=${1#*=}; shift ;;
    --smcryptd) smcryptd=$2; shift 2 ;;
    --smcryptd=*) smcryptd=${1#*=}; shift ;;
    --audit_log) audit_log=$2; shift 2 ;;
    --audit_log=*) audit_log=${1#*=}; shift ;;
    --compare_audit) compare_audit=$2; shift 2 ;;
    --compare_audit=*) compare_audit=${1#*=}; shift ;;
    --compare_rounds) compare_rounds=$2; shift 2 ;;
    --compare_rounds=*) compare_rounds=${1#*=}; shift ;;
    --out) out_dir=$2; shift 2 ;;
    --out=*) out_dir=${1#*=}; shift ;;
    --label) label=$2; shift 2 ;;
    --label=*) label=${1#*=}; shift ;;
    --) shift; client_args+=("$@"); break ;;
    *) client_args+=("$1"); shift ;;
  esac
done

if [[ -z "$build_dir" ]]; then
  build_dir=build
  build_release "$build_dir" "$(nproc)" smcryptd smcrypt-rpc-ceiling
fi
client="$build_dir/bench/rpc_ceiling/smcrypt-rpc-ceiling"
smcryptd=${smcryptd:-$build_dir/server/smcryptd}
out_dir=${out_dir:-$build_dir/rpc-ceiling}
label=${label:-$smcryptd}
for f in "$client" "$smcryptd"; do
  [[ -x "$f" ]] || { echo "rpc-ceiling: $f is not built" >&2; exit 1; }
done

tmp=$(mktemp -d)
smcrypt_temp+=("$tmp")
cleanup_on_exit

keys="$tmp/keys"
mkdir -p "$keys"
write_sm2_key "$keys/signing.pem"
write_secret_key "SM4 KEY" 16 "$keys/data.pem"
lock_keyring "$keys"

"$client" --serve_echo=127.0.0.1:0 2>"$tmp/echo.log" &
smcrypt_pids+=($!)
echo_port=$(wait_port "$tmp/echo.log" "echo listening on" "${smcrypt_pids[-1]}")
"$smcryptd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --keys_dir="$keys" \
  --audit_log="$audit_log" >"$tmp/smcryptd.log" 2>&1 &
smcrypt_pids+=($!)
port=$(wait_port "$tmp/smcryptd.log" "listening on" "${smcrypt_pids[-1]}")
echo "rpc-ceiling: echo on 127.0.0.1:$echo_port, $smcryptd on 127.0.0.1:$port" \
     "(--audit_log=$audit_log)" >&2

mkdir -p "$out_dir"
start=$SECONDS
if [[ -n "$compare_audit" ]]; then
  "$smcryptd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --keys_dir="$keys" \
    --audit_log="$compare_audit" >"$tmp/smcryptd-audit.log" 2>&1 &
  smcrypt_pids+=($!)
  audit_port=$(wait_port "$tmp/smcryptd-audit.log" "listening on" "${smcrypt_pids[-1]}")
  echo "rpc-ceiling: audit on: 127.0.0.1:$audit_port (--audit_log=$compare_audit)" >&2
  for ((round = 1; round <= compare_rounds; round++)); do
    order=(off on)
    ((round % 2 == 0)) && order=(on off)
    for which in "${order[@]}"; do
      target_port=$port
      [[ $which == on ]] && target_port=$audit_port
      "$client" --target="127.0.0.1:$target_port" --echo="127.0.0.1:$echo_port" \
        --label="audit $which" --json="$out_dir/audit-$which-$round.json" \
        "${client_args[@]}" --rounds=1 >/dev/null
    done
  done
  python3 - "$out_dir" "$compare_rounds" <<'EOF' | tee "$out_dir/audit-cost.md"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rates = {}  # (rpc, in_flight) -> [(off, on)] per round
for r in range(1, rounds + 1):
    got = {}
    for which in ("off", "on"):
        for row in json.load(open(f"{out}/audit-{which}-{r}.json"))["rows"]:
            if row["errors"]:
                sys.exit(f"rpc-ceiling: {row['rpc']} had {row['errors']} errors (audit {which})")
            got.setdefault((row["rpc"], row["in_flight"]), {})[which] = row["rps"]
    for key, v in got.items():
        rates.setdefault(key, []).append((v["off"], v["on"]))
print("| RPC | in flight | rounds | req/s audit off (median) | req/s audit on (median) "
      "| on/off median | quartiles | min-max | on/off per round |")
print("|---|---|---|---|---|---|---|---|---|")
for (rpc, n), v in rates.items():
    ratios = [on / off for off, on in v]
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    print(f"| {rpc} | {n} | {len(v)} | {statistics.median(o for o, _ in v):.0f} "
          f"| {statistics.median(a for _, a in v):.0f} | {statistics.median(ratios):.3f} "
          f"| {q[0]:.3f}-{q[2]:.3f} | {min(ratios):.3f}-{max(ratios):.3f} "
          f"| {', '.join(f'{x:.3f}' for x in ratios)} |")
EOF
  lines=0
  [[ -f "$compare_audit" ]] && lines=$(wc -l <"$compare_audit")
  echo "rpc-ceiling: $((SECONDS - start)) s; $lines audit lines in $compare_audit;" \
       "audit-cost.md and the rounds' JSON in $out_dir/" >&2
  exit 0
fi
"$client" --target="127.0.0.1:$port" --echo="127.0.0.1:$echo_port" --label="$label" \
  --markdown="$out_dir/table.md" --json="$out_dir/report.json" "${client_args[@]}" >/dev/null
cat "$out_dir/table.md"
echo "rpc-ceiling: $((SECONDS - start)) s; table.md and report.json in $out_dir/" >&2
