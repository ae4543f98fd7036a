// smcrypt from Java: SM3, SM2 sign/verify and SM4-GCM through smcryptd, with grpc-java.
//
// Build and run with Debian 12's packages (no Maven or Gradle, nothing downloaded):
//   clients/examples/java/build.sh
//   clients/examples/java/run.sh localhost:50051                 # plaintext
//   clients/examples/java/run.sh localhost:50051 --ca ca.pem     # TLS (smcryptd --tls_cert/--tls_key)
//   clients/examples/java/run.sh localhost:50051 --ca ca.pem --cert client.pem --key client.key
//                                                                # mTLS (smcryptd --tls_client_ca)
//   clients/examples/java/run.sh dns:///smcryptd-headless.smcrypt.svc:50051 --calls 100
//                                # every replica behind the headless Service
//   clients/examples/java/run.sh 127.0.0.1:50051,127.0.0.1:50052 --calls 100   # a static list
// The key file is a PKCS#8 PEM ("BEGIN PRIVATE KEY", what OpenSSL 3 writes). The target
// defaults to $SMCRYPT_TARGET, then localhost:50051. The channel uses round_robin and retries
// UNAVAILABLE (SERVICE_CONFIG); --calls N makes only N SM3 Hash calls, spread over the replicas.
//
// The generated classes are in package smcrypt.v1 (crypto.proto's java_package), one per
// message; bytes fields are com.google.protobuf.ByteString. Errors carry a google.rpc.ErrorInfo
// read with io.grpc.protobuf.StatusProto (com.google.rpc.ErrorInfo: build.sh generates it, as
// Debian's common-protos jar predates it; Maven Central's proto-google-common-protos has it).
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.EquivalentAddressGroup;
import io.grpc.ManagedChannel;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.StatusProto;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import smcrypt.v1.Algorithm;
import smcrypt.v1.CryptoServiceGrpc;
import smcrypt.v1.DecryptRequest;
import smcrypt.v1.EncryptRequest;
import smcrypt.v1.EncryptResponse;
import smcrypt.v1.GenerateKeyPairRequest;
import smcrypt.v1.GenerateKeyPairResponse;
import smcrypt.v1.GenerateRandomRequest;
import smcrypt.v1.HashRequest;
import smcrypt.v1.KeyRef;
import smcrypt.v1.SignRequest;
import smcrypt.v1.VerifyRequest;

public final class Example {
  // round_robin over every address the target resolves to (one connection per replica, calls
  // in turn over the ready ones), and up to 4 retries of a CryptoService or health call that fails
  // with UNAVAILABLE (a replica stopping or unreachable) or CANCELLED (what gRPC C++ servers answer
  // to calls they had received but not started when they stop), after 0.05 s, 0.1 s, 0.2 s and
  // 0.4 s at most (random jitter, capped at 1 s): the policy of smcrypt's own clients
  // (kServiceConfigJson in clients/smcrypt/session.h).
  static final String SERVICE_CONFIG = """
      {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [{
          "name": [{"service": "smcrypt.v1.CryptoService"}, {"service": "grpc.health.v1.Health"}],
          "retryPolicy": {
            "maxAttempts": 5,
            "initialBackoff": "0.05s",
            "maxBackoff": "1s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"]
          }
        }]
      }""";

  public static void main(String[] args) throws Exception {
    String target = System.getenv().getOrDefault("SMCRYPT_TARGET", "localhost:50051");
    String ca = null, cert = null, key = null;
    int calls = 0;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--ca" -> ca = args[++i];
        case "--cert" -> cert = args[++i];
        case "--key" -> key = args[++i];
        case "--calls" -> calls = Integer.parseInt(args[++i]);
        default -> target = args[i];
      }
    }

    // HOST:PORT,HOST:PORT,...: exactly those replicas, through StaticResolverProvider.
    if (target.contains(",")) {
      NameResolverRegistry.getDefaultRegistry().register(new StaticResolverProvider());
      target = StaticResolverProvider.SCHEME + ":///" + target;
    }
    @SuppressWarnings("unchecked")
    Map<String, ?> serviceConfig = new com.google.gson.Gson().fromJson(SERVICE_CONFIG, Map.class);
    NettyChannelBuilder builder = NettyChannelBuilder.forTarget(target)
        .defaultServiceConfig(serviceConfig).enableRetry();
    if (ca == null) {
      builder.usePlaintext();
    } else {
      // TLS: trust the given CA; with --cert/--key present a client certificate (mTLS).
      SslContextBuilder tls = GrpcSslContexts.forClient().trustManager(new File(ca));
      if (cert != null) tls.keyManager(new File(cert), new File(key));
      try {
        builder.sslContext(tls.build());
      } catch (UnsupportedOperationException e) {
        // gRPC needs ALPN (h2). Debian 12's Netty 4.1.48 offers it only through OpenSSL
        // (netty-tcnative): its JDK provider refuses ALPN. build.sh puts the JNI library where
        // Netty finds it; run through run.sh (Maven Central's Netty does ALPN on the JDK).
        System.err.println("TLS needs netty-tcnative here (libnetty-tcnative-java and -jni, loaded"
            + " as libnetty_tcnative.so; run.sh sets that up): " + e.getMessage()
            + "; OpenSSL: " + OpenSsl.unavailabilityCause());
        System.exit(2);
      }
    }
    ManagedChannel channel = builder.build();
    int rc;
    try {
      rc = calls > 0 ? hashCalls(CryptoServiceGrpc.newBlockingStub(channel), calls)
                     : run(CryptoServiceGrpc.newBlockingStub(channel));
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    System.exit(rc);
  }

  // n SM3 Hash calls, one after another, each with a 10 s deadline; round_robin spreads them
  // over the replicas (each replica's /metrics counts its share). 0, or 1 on a wrong digest.
  static int hashCalls(CryptoServiceGrpc.CryptoServiceBlockingStub service, int n) {
    String want = "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0";
    for (int i = 0; i < n; i++) {
      ByteString d = service.withDeadlineAfter(10, TimeUnit.SECONDS).hash(HashRequest.newBuilder()
          .setAlgorithm(Algorithm.SM3).setData(ByteString.copyFromUtf8("abc")).build()).getDigest();
      if (!HexFormat.of().formatHex(d.toByteArray()).equals(want)) {
        System.err.println("FAIL: Hash call " + (i + 1) + ": SM3(abc) is wrong");
        return 1;
      }
    }
    System.out.println(n + " SM3 Hash calls answered");
    return 0;
  }

  // Scheme smcrypt-static: the target's path is a comma-separated list of HOST:PORT, resolved
  // once to exactly those addresses (in Kubernetes, dns:/// of the headless Service does this).
  static final class StaticResolverProvider extends NameResolverProvider {
    static final String SCHEME = "smcrypt-static";

    @Override protected boolean isAvailable() { return true; }
    @Override protected int priority() { return 5; }
    @Override public String getDefaultScheme() { return SCHEME; }

    @Override public NameResolver newNameResolver(URI uri, NameResolver.Args args) {
      if (!SCHEME.equals(uri.getScheme())) return null;
      List<EquivalentAddressGroup> groups = new ArrayList<>();
      for (String hostPort : uri.getPath().substring(1).split(",")) {
        int colon = hostPort.lastIndexOf(':');
        groups.add(new EquivalentAddressGroup(new InetSocketAddress(
            hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)))));
      }
      return new NameResolver() {
        @Override public String getServiceAuthority() { return "smcryptd"; }
        @Override public void start(Listener2 listener) {
          listener.onResult(ResolutionResult.newBuilder().setAddresses(groups).build());
        }
        @Override public void shutdown() {}
      };
    }
  }

  static int run(CryptoServiceGrpc.CryptoServiceBlockingStub service) {
    HexFormat hex = HexFormat.of();
    // Every call gets its own deadline (withDeadlineAfter starts counting when it is called).
    java.util.function.Supplier<CryptoServiceGrpc.CryptoServiceBlockingStub> call =
        () -> service.withDeadlineAfter(10, TimeUnit.SECONDS);

    // SM3 (GB/T 32905): bytes in, 32-byte digest out.
    ByteString digest = call.get().hash(HashRequest.newBuilder()
        .setAlgorithm(Algorithm.SM3).setData(ByteString.copyFromUtf8("abc")).build()).getDigest();
    System.out.println("SM3(abc)        " + hex.formatHex(digest.toByteArray()));

    // SM2: a fresh key pair (PKCS#8 / SubjectPublicKeyInfo DER), then sign and verify with the
    // default user ID 1234567812345678. Signatures are DER unless encoding is RAW (r||s).
    GenerateKeyPairResponse pair = call.get().generateKeyPair(
        GenerateKeyPairRequest.newBuilder().setAlgorithm(Algorithm.SM2).build());
    KeyRef privateKey = KeyRef.newBuilder().setInlineKey(pair.getPrivateKeyDer()).build();
    KeyRef publicKey = KeyRef.newBuilder().setInlineKey(pair.getPublicKeyDer()).build();
    ByteString message = ByteString.copyFrom("transfer 100 CNY to account 42", StandardCharsets.UTF_8);
    ByteString signature = call.get().sign(SignRequest.newBuilder()
        .setAlgorithm(Algorithm.SM2).setKey(privateKey).setData(message).build()).getSignature();
    VerifyRequest.Builder verify = VerifyRequest.newBuilder()
        .setAlgorithm(Algorithm.SM2).setKey(publicKey).setData(message).setSignature(signature);
    boolean valid = call.get().verify(verify.build()).getValid();
    boolean forged = call.get().verify(
        verify.setData(message.concat(ByteString.copyFromUtf8("0"))).build()).getValid();
    System.out.println("SM2 signature   " + hex.formatHex(signature.toByteArray())
        + " valid: " + valid + " | other message: " + forged);

    // SM4-GCM (RFC 8998): the server draws the 12-byte nonce and returns it with the tag.
    ByteString sm4Key = call.get().generateRandom(
        GenerateRandomRequest.newBuilder().setLength(16).build()).getData();
    KeyRef key = KeyRef.newBuilder().setInlineKey(sm4Key).build();
    ByteString aad = ByteString.copyFromUtf8("v1");
    EncryptResponse sealed = call.get().encrypt(EncryptRequest.newBuilder()
        .setAlgorithm(Algorithm.SM4_GCM).setKey(key).setPlaintext(message).setAad(aad).build());
    DecryptRequest.Builder open = DecryptRequest.newBuilder()
        .setAlgorithm(Algorithm.SM4_GCM).setKey(key).setNonce(sealed.getNonce())
        .setCiphertext(sealed.getCiphertext()).setTag(sealed.getTag()).setAad(aad);
    ByteString opened = call.get().decrypt(open.build()).getPlaintext();
    System.out.println("SM4-GCM         nonce " + hex.formatHex(sealed.getNonce().toByteArray())
        + " tag " + hex.formatHex(sealed.getTag().toByteArray())
        + " round trip: " + opened.equals(message));

    // Errors are gRPC status codes with a google.rpc.ErrorInfo (domain smcrypt.v1) in the
    // status details: branch on its reason, not on the message text. A wrong tag is
    // INVALID_ARGUMENT "decryption failed", reason DECRYPTION_FAILED.
    String tampered = "accepted";
    ErrorInfo tamperedInfo = null;
    try {
      call.get().decrypt(open.setTag(ByteString.copyFrom(new byte[16])).build());
    } catch (StatusRuntimeException e) {
      tampered = e.getStatus().getCode() + ": " + e.getStatus().getDescription();
      tamperedInfo = errorInfo(e);
    }
    System.out.println("tampered tag    " + tampered + " | reason "
        + (tamperedInfo == null ? "(no ErrorInfo)" : tamperedInfo.getReason()));

    // An unknown key_id: NOT_FOUND, reason KEY_NOT_FOUND, the key_id in the metadata.
    String unknown = "accepted";
    ErrorInfo unknownInfo = null;
    try {
      call.get().sign(SignRequest.newBuilder().setAlgorithm(Algorithm.SM2)
          .setKey(KeyRef.newBuilder().setKeyId("no-such-key")).setData(message).build());
    } catch (StatusRuntimeException e) {
      unknown = e.getStatus().getCode().toString();
      unknownInfo = errorInfo(e);
    }
    System.out.println("unknown key_id  " + unknown + " | reason "
        + (unknownInfo == null ? "(no ErrorInfo)"
           : unknownInfo.getReason() + " key_id " + unknownInfo.getMetadataOrDefault("key_id", "")));

    boolean ok = valid && !forged && opened.equals(message) && tampered.startsWith("INVALID_ARGUMENT")
        && tamperedInfo != null && tamperedInfo.getReason().equals("DECRYPTION_FAILED")
        && unknownInfo != null && unknownInfo.getReason().equals("KEY_NOT_FOUND");
    return ok ? 0 : 1;
  }

  /** The google.rpc.ErrorInfo of smcryptd (domain smcrypt.v1) in e's status details, or null. */
  static ErrorInfo errorInfo(StatusRuntimeException e) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);  // grpc-status-details-bin
    if (status == null) return null;
    for (Any detail : status.getDetailsList()) {
      if (detail.is(ErrorInfo.class)) {
        try {
          ErrorInfo info = detail.unpack(ErrorInfo.class);
          if (info.getDomain().equals("smcrypt.v1")) return info;
        } catch (InvalidProtocolBufferException ignored) {
          // not an ErrorInfo after all
        }
      }
    }
    return null;
  }
}
