#!/usr/bin/env bash
# run_java_client.sh SMCRYPTD PROTO_DIR SRC_DIR WORK_DIR EXAMPLE_DIR VECTORS — the Java client
# interop test, then the client example of EXAMPLE_DIR against the same servers.
#
# Builds EXAMPLE_DIR with its build.sh into WORK_DIR/example (the classes protoc and
# grpc_java_plugin generate from PROTO_DIR, compiled with Example.java against Debian's jars in
# /usr/share/java; nothing is downloaded), compiles SRC_DIR/*.java (InteropTest, Rfc9180Hpke)
# against those and BouncyCastle (libbcprov-java) into WORK_DIR/test-classes, makes a CA, a
# server certificate for 127.0.0.1/localhost, a client certificate and a second, unrelated CA
# with openssl in WORK_DIR/tls, and starts three smcryptd: plaintext (smcryptd_launch.sh, fresh
# keyring), TLS (--tls_cert/--tls_key) and mTLS (--tls_client_ca too), each on port 0. Then
# `java InteropTest VECTORS` (VECTORS: RFC 9180 A.3.1, tests/testdata/hpke_rfc9180_p256.txt),
# and the example over plaintext and over mTLS.
#
# Exit 77 (ctest SKIP_RETURN_CODE) only when there is no JDK (java and javac). A JDK without
# the Debian jars, protoc or the plugin is a failure naming the packages to install
# (deploy/local/install-deps.sh installs them), never a skip. SMCRYPT_TEST_SEED repeats a run's
# random inputs.
set -euo pipefail
smcryptd=$1 proto=$2 src=$3 work=$4 example=$5 vectors=$6

for bin in java javac; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "SKIP: $bin not found; the Java client interop test needs a JDK (Debian" \
         "openjdk-17-jdk-headless, installed by deploy/local/install-deps.sh)"
    exit 77
  fi
done
here=$(cd "$(dirname "$0")" && pwd)
command -v openssl >/dev/null 2>&1 || { echo "FAIL: openssl not found (apt-get install openssl)" >&2; exit 1; }

mkdir -p "$work"
SMCRYPT_PROTO_DIR="$proto" bash "$example/build.sh" "$work/example"
# shellcheck source=SCRIPTDIR/../../clients/examples/java/debian-jars.sh
source "$example/debian-jars.sh"
debian_classpath bcprov
cp="$(sed -n 's/^-cp "\(.*\)"$/\1/p' "$work/example/java-args"):$SMCRYPT_CLASSPATH"
stamp=$(cat "$src"/*.java "$work/example/stamp" "$0" | sha256sum | cut -d' ' -f1)
if [[ ! -f "$work/test-classes/stamp" || "$(cat "$work/test-classes/stamp")" != "$stamp" ]]; then
  rm -rf "$work/test-classes"
  mkdir -p "$work/test-classes"
  javac -nowarn -encoding UTF-8 --release 17 -d "$work/test-classes" -cp "$cp" "$src"/*.java
  echo "$stamp" >"$work/test-classes/stamp"
fi

# ---- Certificates: a CA, the server's (SAN IP:127.0.0.1, DNS:localhost), a client's, another CA
tls="$work/tls"
rm -rf "$tls"
mkdir -p "$tls"
(
  cd "$tls"
  ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
  openssl req -x509 "${ec[@]}" -days 1 -subj /CN=smcrypt-java-test-ca -keyout ca.key -out ca.pem
  openssl req -x509 "${ec[@]}" -days 1 -subj /CN=unrelated-ca -keyout other-ca.key -out other-ca.pem
  openssl req "${ec[@]}" -subj /CN=localhost -keyout server.key -out server.csr
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
    -extfile san.ext -out server.pem
  openssl req "${ec[@]}" -subj /CN=java-client -keyout client.key -out client.csr
  openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -out client.pem
  chmod 600 ./*.key
) >"$tls/openssl.log" 2>&1 || { cat "$tls/openssl.log" >&2; exit 1; }

# ---- Servers ------------------------------------------------------------------------------
# shellcheck source=SCRIPTDIR/smcryptd_launch.sh
source "$here/smcryptd_launch.sh"
start_smcryptd "$smcryptd" "$work"

tls_pids=()
stop_all() {
  stop_pids "${tls_pids[@]}"
  stop_smcryptd
}
trap stop_all EXIT

# start_tls_smcryptd NAME FLAGS... — sets tls_target to the HOST:PORT the server reports.
start_tls_smcryptd() {
  local name=$1 log="$work/smcryptd-$1.log" port="" pid
  shift
  : >"$log"
  "$smcryptd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --keys_dir="$SMCRYPT_KEYS_DIR" \
    --tls_cert="$tls/server.pem" --tls_key="$tls/server.key" --drain_delay=0 "$@" >>"$log" 2>&1 &
  pid=$!
  tls_pids+=("$pid")
  port=$(wait_port "$log" "listening on" "$pid" 300) || {
    echo "FAIL: smcryptd ($name) did not report its port (it exited, or 30 s passed)" >&2
    exit 1
  }
  echo "smcryptd ($name, pid $pid) serving on 127.0.0.1:$port" >&2
  tls_target="127.0.0.1:$port"
}
start_tls_smcryptd tls
export SMCRYPT_TLS_TARGET=$tls_target
start_tls_smcryptd mtls --tls_client_ca="$tls/ca.pem"
export SMCRYPT_MTLS_TARGET=$tls_target
export SMCRYPT_TLS_DIR=$tls

native=$(sed -n 's/^"-Djava.library.path=\(.*\)"$/\1/p' "$work/example/java-args")
java -cp "$work/test-classes:$cp" -Djava.library.path="$native" InteropTest "$vectors"

export SMCRYPT_JAVA_OUT="$work/example"
echo "== $example (plaintext, $SMCRYPT_TARGET)"
bash "$example/run.sh" "$SMCRYPT_TARGET" </dev/null
echo "== $example (mTLS, $SMCRYPT_MTLS_TARGET)"
bash "$example/run.sh" "$SMCRYPT_MTLS_TARGET" --ca "$tls/ca.pem" \
  --cert "$tls/client.pem" --key "$tls/client.key" </dev/null
echo "== $example across three replicas (static resolver, round_robin)"
start_replicas "$smcryptd" "$work" 3
bash "$example/run.sh" "$SMCRYPT_REPLICAS" --calls 60 </dev/null
check_spread 60
