#!/usr/bin/env bash
# build.sh [OUT_DIR] — builds the Java client example from Debian 12's packages, offline:
# `protoc` with grpc-java's plugin (protobuf-compiler-grpc-java-plugin, /usr/bin/grpc_java_plugin)
# generates the classes of proto/smcrypt/v1/crypto.proto (package smcrypt.v1) and of
# grpc/health/v1/health.proto, and google.rpc.ErrorInfo from proto/google/rpc/error_info.proto
# (Debian's common-protos jar predates it), into OUT_DIR/gen, and `javac` compiles them with
# src/main/java/Example.java against the jars in /usr/share/java into OUT_DIR/classes.
# OUT_DIR/classpath is the class path to run with (run.sh reads it):
#
#   clients/examples/java/build.sh            # OUT_DIR defaults to clients/examples/java/build
#   clients/examples/java/run.sh localhost:50051
#
# OUT_DIR/java-args holds the class path and -Djava.library.path for `java @OUT_DIR/java-args`:
# TLS goes through Debian's netty-tcnative (OpenSSL), whose JNI library is copied to
# OUT_DIR/native under the name Netty loads (see debian-jars.sh).
#
# Packages: openjdk-17-jdk-headless protobuf-compiler protobuf-compiler-grpc-java-plugin
# libgrpc-java libprotobuf-java libgoogle-common-protos-java libguava-java libperfmark-java
# libgoogle-gson-java libnetty-java libnetty-tcnative-java libnetty-tcnative-jni
# libgeronimo-annotation-1.3-spec-java (deploy/local/install-deps.sh installs them). Nothing is
# downloaded. A second run with the same inputs (the .proto files, Example.java, the tools and
# the jar list) does nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}
proto=${SMCRYPT_PROTO_DIR:-$here/../../../proto}
plugin=${SMCRYPT_GRPC_JAVA_PLUGIN:-/usr/bin/grpc_java_plugin}

missing=()
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler)
[[ -x "$plugin" ]] || missing+=(protobuf-compiler-grpc-java-plugin)
if (( ${#missing[@]} )); then
  echo "FAIL: missing ${missing[*]}; install with deploy/local/install-deps.sh" \
       "(apt-get install ${missing[*]})" >&2
  exit 1
fi
# shellcheck source=SCRIPTDIR/debian-jars.sh
source "$here/debian-jars.sh"
debian_classpath "${smcrypt_client_jars[@]}"
jars=$SMCRYPT_CLASSPATH
if [[ -z "$smcrypt_tcnative_so" ]]; then
  echo "FAIL: missing libnetty-tcnative.so; install with deploy/local/install-deps.sh" \
       "(apt-get install libnetty-tcnative-jni)" >&2
  exit 1
fi

protos=(smcrypt/v1/crypto.proto grpc/health/v1/health.proto)
stamp=$( { cat "$proto/smcrypt/v1/crypto.proto" "$proto/third_party/grpc/health/v1/health.proto" \
             "$here/proto/google/rpc/error_info.proto" \
             "$here/src/main/java/Example.java" "$0" "$here/debian-jars.sh"; echo "$jars";
           sha256sum "$smcrypt_tcnative_so"; javac -version 2>&1;
           protoc --version; sha256sum "$plugin"; } | sha256sum | cut -d' ' -f1)
mkdir -p "$out"
if [[ -f "$out/stamp" && "$(cat "$out/stamp")" == "$stamp" && -f "$out/java-args" ]]; then
  echo "build.sh: $out is up to date"
  exit 0
fi
rm -rf "$out/gen" "$out/classes" "$out/native" "$out/stamp" "$out/classpath" "$out/java-args"
mkdir -p "$out/gen" "$out/classes" "$out/native"
cp "$smcrypt_tcnative_so" "$out/native/libnetty_tcnative.so"
protoc -I "$proto" -I "$proto/third_party" --java_out="$out/gen" \
  --plugin=protoc-gen-grpc-java="$plugin" --grpc-java_out="$out/gen" "${protos[@]}"
protoc -I "$here/proto" --java_out="$out/gen" google/rpc/error_info.proto
find "$out/gen" -name '*.java' >"$out/sources.txt"
echo "$here/src/main/java/Example.java" >>"$out/sources.txt"
javac -nowarn -encoding UTF-8 --release 17 -d "$out/classes" -cp "$jars" @"$out/sources.txt"
echo "$out/classes:$jars" >"$out/classpath"
printf -- '-cp "%s"\n"-Djava.library.path=%s"\n' "$out/classes:$jars" "$out/native" >"$out/java-args"
echo "$stamp" >"$out/stamp"
echo "build.sh: built $out/classes ($(grep -c . "$out/sources.txt") sources)"
