#!/usr/bin/env bash
# run_sm2_key_exchange_bc.sh TOOL SRC_DIR WORK_DIR [COUNT] — the SM2 key exchange
# (GB/T 32918.3-2016 §6) differential test against BouncyCastle 1.72's SM2KeyExchange
# (libbcprov-java, /usr/share/java/bcprov.jar).
#
#   TOOL gen SEED COUNT | java Sm2KeyExchangeBc | TOOL check
#
# The tool (sm2_key_exchange_bc_tool) draws COUNT cases (default 64: long-term and
# ephemeral scalars, IDs from empty to 8191 bytes, klen 1 to 300 bytes) and runs smcrypt's
# initiator against its responder; Sm2KeyExchangeBc runs BC's responder and BC's
# initiator (which checks smcrypt's S_B) on the same inputs and compares K, S_B and S_A;
# then the tool runs smcrypt's initiator on BC's R_B and S_B and smcrypt's responder on
# BC's R_A and S_A. Any mismatch fails the test.
#
# Exit 77 (ctest SKIP_RETURN_CODE) only when there is no JDK (java and javac); a missing
# bcprov.jar is a failure. SMCRYPT_TEST_SEED repeats a run's inputs.
set -euo pipefail
tool=$1 src=$2 work=$3 count=${4:-64}

for bin in java javac; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "SKIP: $bin not found; the SM2 key exchange BouncyCastle test needs a JDK (Debian" \
         "openjdk-17-jdk-headless, installed by deploy/local/install-deps.sh)"
    exit 77
  fi
done
jars=${SMCRYPT_JAVA_JARS_DIR:-/usr/share/java}
bcprov=$jars/bcprov.jar
if [[ ! -r "$bcprov" ]]; then
  echo "FAIL: $bcprov missing; install with deploy/local/install-deps.sh" \
       "(apt-get install libbcprov-java)" >&2
  exit 1
fi

mkdir -p "$work"
stamp=$(cat "$src"/*.java "$0" | sha256sum | cut -d' ' -f1)
if [[ ! -f "$work/classes/stamp" || "$(cat "$work/classes/stamp")" != "$stamp" ]]; then
  rm -rf "$work/classes"
  mkdir -p "$work/classes"
  javac -nowarn -encoding UTF-8 --release 17 -d "$work/classes" -cp "$bcprov" "$src"/*.java
  echo "$stamp" >"$work/classes/stamp"
fi

seed=${SMCRYPT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "SM2 key exchange vs BouncyCastle: $count cases, seed $seed" \
     "(SMCRYPT_TEST_SEED=$seed repeats this run)"
"$tool" gen "$seed" "$count" >"$work/smcrypt.txt"
java -cp "$work/classes:$bcprov" Sm2KeyExchangeBc <"$work/smcrypt.txt" >"$work/bc.txt"
"$tool" check <"$work/bc.txt"
