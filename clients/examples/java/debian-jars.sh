# shellcheck shell=bash disable=SC2034  # the variables are read by the scripts that source this file
# debian-jars.sh — sourced by build.sh (and tests/interop/run_java_client.sh): the Debian 12
# jars a grpc-java client of smcryptd needs, found in /usr/share/java (SMCRYPT_JAVA_JARS_DIR
# overrides the folder), each with the package that installs it. grpc-java 1.41's
# libgrpc-java does not depend on its transport and runtime, hence the list.
#
#   debian_classpath JAR...   sets SMCRYPT_CLASSPATH (the jars joined by ':'); a missing jar
#                             is an error naming the packages to install (return 1).

declare -A smcrypt_jar_package=(
  [grpc-api]=libgrpc-java [grpc-context]=libgrpc-java [grpc-core]=libgrpc-java
  [grpc-netty]=libgrpc-java [grpc-protobuf]=libgrpc-java [grpc-protobuf-lite]=libgrpc-java
  [grpc-stub]=libgrpc-java
  [protobuf]=libprotobuf-java
  [proto-google-common-protos]=libgoogle-common-protos-java
  [guava]=libguava-java
  [perfmark-api]=libperfmark-java
  [gson]=libgoogle-gson-java
  [netty-buffer]=libnetty-java [netty-codec]=libnetty-java [netty-codec-http]=libnetty-java
  [netty-codec-http2]=libnetty-java [netty-codec-socks]=libnetty-java
  [netty-common]=libnetty-java [netty-handler]=libnetty-java
  [netty-handler-proxy]=libnetty-java [netty-resolver]=libnetty-java
  [netty-transport]=libnetty-java
  # javax.annotation.Generated, which grpc-java's generated *Grpc.java uses (JDK 11+ lacks it)
  [geronimo-annotation-1.3-spec]=libgeronimo-annotation-1.3-spec-java
  # OpenSSL for TLS: Debian's Netty offers ALPN (which gRPC needs) only through netty-tcnative
  [netty-tcnative]=libnetty-tcnative-java
  [bcprov]=libbcprov-java
)

# The client: generated code, grpc-java over Netty (TLS through the JDK's provider), status
# details (io.grpc.protobuf.StatusProto, com.google.rpc.Status).
smcrypt_client_jars=(
  grpc-api grpc-context grpc-core grpc-netty grpc-protobuf grpc-protobuf-lite grpc-stub
  protobuf proto-google-common-protos guava perfmark-api gson
  netty-buffer netty-codec netty-codec-http netty-codec-http2 netty-codec-socks netty-common
  netty-handler netty-handler-proxy netty-resolver netty-transport netty-tcnative
  geronimo-annotation-1.3-spec
)

# netty-tcnative's JNI library (libnetty-tcnative-jni). Netty 4.1.48 loads it only as
# libnetty_tcnative.so and the library refuses to run under another file name, a symlink
# included (the JVM opens the link's target); Debian installs libnetty-tcnative.so. So
# build.sh copies it, under the name Netty loads, into OUT_DIR/native, on java.library.path.
smcrypt_tcnative_so=""
for f in /usr/lib/*/jni/libnetty-tcnative.so; do
  if [[ -r "$f" ]]; then smcrypt_tcnative_so=$f; break; fi
done

debian_classpath() {
  local dir=${SMCRYPT_JAVA_JARS_DIR:-/usr/share/java} jar cp="" missing=()
  for jar in "$@"; do
    if [[ -r "$dir/$jar.jar" ]]; then
      cp+="${cp:+:}$dir/$jar.jar"
    else
      missing+=("${smcrypt_jar_package[$jar]:-?}($jar.jar)")
    fi
  done
  if (( ${#missing[@]} )); then
    local pkgs
    pkgs=$(printf '%s\n' "${missing[@]}" | sed 's/(.*//' | sort -u | tr '\n' ' ')
    echo "FAIL: missing in $dir: ${missing[*]}; install with deploy/local/install-deps.sh" \
         "(apt-get install ${pkgs% })" >&2
    return 1
  fi
  SMCRYPT_CLASSPATH=$cp
}
