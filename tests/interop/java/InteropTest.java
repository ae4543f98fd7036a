// InteropTest.java — a Java gRPC client (grpc-java 1.41, classes generated from
// proto/smcrypt/v1/crypto.proto) of a real smcryptd, checked by BouncyCastle 1.72 (Debian's
// libbcprov-java), run by tests/interop/run_java_client.sh:
//
//   java InteropTest RFC9180_VECTORS     with SMCRYPT_TARGET (plaintext), SMCRYPT_KEYS_DIR (its
//                                        keyring), SMCRYPT_TLS_TARGET (TLS), SMCRYPT_MTLS_TARGET
//                                        (mTLS) and SMCRYPT_TLS_DIR (ca.pem, client.pem,
//                                        client.key, other-ca.pem)
//
// In both directions (smcryptd computes and BouncyCastle checks; BouncyCastle computes and
// smcryptd checks), on inputs drawn afresh each run plus known answers:
//   SM3 (and HashStream)    SM3Digest; GB/T 32905 A.1 SM3("abc")
//   HMAC-SM3                HMac(SM3Digest), keys of 0 to 100 bytes, truncated tags, the keyring key
//   SM4-CBC/ECB/CTR         SM4Engine in CBCBlockCipher / SICBlockCipher, PKCS#7 or no padding
//   SM4-CFB/OFB             CFBBlockCipher(SM4Engine, 128) / OFBBlockCipher(SM4Engine, 128), the
//                           JCE "SM4/CFB/NoPadding" / "SM4/OFB/NoPadding" (BC provider) agreeing;
//                           0 to 70,000 bytes, server-drawn IVs, EncryptStream / DecryptStream
//                           with odd chunk sizes equal to the one-shot ciphertext
//   SM4-GCM                 GCMBlockCipher(SM4Engine): 12-byte and other nonces, tags 12–16 bytes,
//                           aad; a tampered tag is INVALID_ARGUMENT "decryption failed"
//   SM2 signatures          SM2Signer, DER (StandardDSAEncoding) and raw r‖s (PlainDSAEncoding),
//                           default user ID 1234567812345678 (SignatureOptions.user_id unset), a
//                           custom one, an empty one (ParametersWithID); prehashed e = SM3(Z‖M);
//                           keys raw, compressed, PKCS#8 / SPKI both ways, the keyring key
//   SM2 encryption          SM2Engine Mode.C1C3C2 (smcrypt's default) and Mode.C1C2C3
//                           (SM2_CIPHERTEXT_FORMAT_C1C2C3), and DER SM2Cipher built with BC's ASN.1
//   HPKE-P256-SHA256-AES128GCM  Rfc9180Hpke (RFC 9180 from BC primitives, BC 1.72 having no HPKE
//                           class), first checked against RFC 9180 A.3.1; one-shot, batch, streams
//   SM2 key exchange        SM2KeyExchange (GB/T 32918.3 §6, ParametersWithID) as the peer of the
//                           KeyExchange stream (async stub, one message at a time): smcryptd initiator
//                           + BC responder and smcryptd responder + BC initiator, with and without
//                           confirmation, klen 16 and 48, custom and default user IDs, BC's key pairs
//                           (smcryptd's own as PKCS#8, the peer's as a raw point or SPKI); K equal,
//                           S_A / S_B accepted by BC; a flipped S_B / S_A byte is UNAUTHENTICATED with
//                           no K, and another user ID fails confirmation (or gives another K)
//   errors                  google.rpc.ErrorInfo from StatusProto.fromThrowable: DECRYPTION_FAILED on
//                           every failed tag / C3 / HPKE open, KEY_NOT_FOUND, WRONG_KEY_FAMILY,
//                           INVALID_KEY, and in a batch item's Status.details
//   Rewrap, data keys       EnvelopeChecks.java: GCMBlockCipher(SM4Engine) under the keyring's
//                           dek versions and SM2Engine under sm2.pem
//   ListKeys                EnvelopeChecks.java: pages of 2 listing the keyring's ids, families and
//                           versions; SM2 / EC fingerprints equal to java.security's SHA-256 of
//                           GetPublicKey's SPKI; a bad page_token INVALID_ARGUMENT with ErrorInfo
//   TLS and mTLS            grpc-netty with the CA made by the runner: calls over TLS, refusals for
//                           another CA, another host name, plaintext, and mTLS without a certificate
// Random inputs (and BouncyCastle's randomness) come from a seeded generator:
// SMCRYPT_TEST_SEED=N repeats a run's inputs. Prints "N passed, N failed" and exits 1 on a failure.
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.bouncycastle.asn1.ASN1EncodableVector;
import org.bouncycastle.asn1.ASN1Integer;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.ASN1Sequence;
import org.bouncycastle.asn1.DEROctetString;
import org.bouncycastle.asn1.DERSequence;
import org.bouncycastle.asn1.gm.GMNamedCurves;
import org.bouncycastle.asn1.gm.GMObjectIdentifiers;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.AsymmetricCipherKeyPair;
import org.bouncycastle.crypto.BlockCipher;
import org.bouncycastle.crypto.BufferedBlockCipher;
import org.bouncycastle.crypto.CipherParameters;
import org.bouncycastle.crypto.InvalidCipherTextException;
import org.bouncycastle.crypto.agreement.SM2KeyExchange;
import org.bouncycastle.crypto.digests.SM3Digest;
import org.bouncycastle.crypto.engines.SM2Engine;
import org.bouncycastle.crypto.engines.SM4Engine;
import org.bouncycastle.crypto.generators.ECKeyPairGenerator;
import org.bouncycastle.crypto.macs.HMac;
import org.bouncycastle.crypto.modes.CBCBlockCipher;
import org.bouncycastle.crypto.modes.CFBBlockCipher;
import org.bouncycastle.crypto.modes.GCMBlockCipher;
import org.bouncycastle.crypto.modes.OFBBlockCipher;
import org.bouncycastle.crypto.modes.SICBlockCipher;
import org.bouncycastle.crypto.paddings.PKCS7Padding;
import org.bouncycastle.crypto.paddings.PaddedBufferedBlockCipher;
import org.bouncycastle.crypto.params.AEADParameters;
import org.bouncycastle.crypto.params.ECKeyGenerationParameters;
import org.bouncycastle.crypto.params.ECNamedDomainParameters;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.crypto.params.KeyParameter;
import org.bouncycastle.crypto.params.ParametersWithID;
import org.bouncycastle.crypto.params.ParametersWithIV;
import org.bouncycastle.crypto.params.ParametersWithRandom;
import org.bouncycastle.crypto.params.SM2KeyExchangePrivateParameters;
import org.bouncycastle.crypto.params.SM2KeyExchangePublicParameters;
import org.bouncycastle.crypto.signers.DSAEncoding;
import org.bouncycastle.crypto.signers.PlainDSAEncoding;
import org.bouncycastle.crypto.signers.SM2Signer;
import org.bouncycastle.crypto.signers.StandardDSAEncoding;
import org.bouncycastle.crypto.util.PrivateKeyFactory;
import org.bouncycastle.crypto.util.PrivateKeyInfoFactory;
import org.bouncycastle.crypto.util.PublicKeyFactory;
import org.bouncycastle.crypto.util.SubjectPublicKeyInfoFactory;
import org.bouncycastle.util.BigIntegers;
import smcrypt.v1.Algorithm;
import smcrypt.v1.CryptoServiceGrpc;
import smcrypt.v1.DecryptRequest;
import smcrypt.v1.EncryptRequest;
import smcrypt.v1.EncryptResponse;
import smcrypt.v1.DecryptStreamParams;
import smcrypt.v1.DecryptStreamRequest;
import smcrypt.v1.DecryptStreamResponse;
import smcrypt.v1.EncryptStreamParams;
import smcrypt.v1.EncryptStreamRequest;
import smcrypt.v1.EncryptStreamResponse;
import smcrypt.v1.GenerateKeyPairRequest;
import smcrypt.v1.GenerateKeyPairResponse;
import smcrypt.v1.GetPublicKeyRequest;
import smcrypt.v1.GetServerInfoRequest;
import smcrypt.v1.GetServerInfoResponse;
import smcrypt.v1.HashRequest;
import smcrypt.v1.HashStreamRequest;
import smcrypt.v1.HashStreamResponse;
import smcrypt.v1.HmacRequest;
import smcrypt.v1.HybridDecryptRequest;
import smcrypt.v1.HybridDecryptStreamRequest;
import smcrypt.v1.HybridDecryptStreamResponse;
import smcrypt.v1.HybridEncryptBatchRequest;
import smcrypt.v1.HybridEncryptBatchResponse;
import smcrypt.v1.HybridEncryptRequest;
import smcrypt.v1.HybridEncryptStreamRequest;
import smcrypt.v1.HybridEncryptStreamResponse;
import smcrypt.v1.HybridStreamParams;
import smcrypt.v1.KeyExchangeParams;
import smcrypt.v1.KeyExchangeRequest;
import smcrypt.v1.KeyExchangeResponse;
import smcrypt.v1.KeyExchangeRole;
import smcrypt.v1.KeyRef;
import smcrypt.v1.Padding;
import smcrypt.v1.PublicKeyDecryptRequest;
import smcrypt.v1.PublicKeyEncryptRequest;
import smcrypt.v1.SignRequest;
import smcrypt.v1.SignatureEncoding;
import smcrypt.v1.SignatureOptions;
import smcrypt.v1.Sm2CiphertextFormat;
import smcrypt.v1.VerifyRequest;

public final class InteropTest {
  static final HexFormat HEX = HexFormat.of();
  static final X9ECParameters SM2_CURVE = GMNamedCurves.getByName("sm2p256v1");
  static final ECNamedDomainParameters SM2_DOMAIN =
      new ECNamedDomainParameters(GMObjectIdentifiers.sm2p256v1, SM2_CURVE);
  static final byte[] DEFAULT_USER_ID = "1234567812345678".getBytes(StandardCharsets.US_ASCII);
  static final byte[] HPKE_HEADER = HEX.parseHex("01001000010001");

  static int passed, failed;
  static String seed;
  static long counter;
  static SecureRandom bcRandom;  // BouncyCastle's randomness: the seeded stream too
  static ManagedChannel channel;
  static CryptoServiceGrpc.CryptoServiceBlockingStub blocking;
  static CryptoServiceGrpc.CryptoServiceStub async;

  // ---- Checks ------------------------------------------------------------------------------

  static void check(boolean ok, String what) {
    if (ok) {
      passed++;
    } else {
      failed++;
      System.err.println("FAIL: " + what);
    }
  }

  static String hex(byte[] b) { return HEX.formatHex(b); }
  static String hex(ByteString b) { return hex(b.toByteArray()); }
  static ByteString bs(byte[] b) { return ByteString.copyFrom(b); }
  static ByteString bs(String s) { return ByteString.copyFrom(s, StandardCharsets.UTF_8); }
  static KeyRef inline(byte[] key) { return KeyRef.newBuilder().setInlineKey(bs(key)).build(); }
  static KeyRef inline(ByteString key) { return KeyRef.newBuilder().setInlineKey(key).build(); }
  static KeyRef keyId(String id) { return KeyRef.newBuilder().setKeyId(id).build(); }
  static byte[] concat(byte[]... parts) { return Rfc9180Hpke.concat(parts); }

  // ---- Seeded bytes: SHA-256 in counter mode over the seed ---------------------------------

  static byte[] rand(int n) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      while (out.size() < n) {
        out.write(MessageDigest.getInstance("SHA-256")
            .digest((seed + "/" + counter++).getBytes(StandardCharsets.UTF_8)));
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return Arrays.copyOf(out.toByteArray(), n);
  }

  static int randInt(int lo, int hi) {  // [lo, hi]
    return lo + Integer.remainderUnsigned(new BigInteger(1, rand(4)).intValue(), hi - lo + 1);
  }

  /** A SecureRandom whose bytes are the seeded stream (BouncyCastle's keys, k and IVs). */
  static final class SeededRandom extends SecureRandom {
    @Override public void nextBytes(byte[] bytes) {
      System.arraycopy(rand(bytes.length), 0, bytes, 0, bytes.length);
    }
    @Override public byte[] generateSeed(int n) { return rand(n); }
  }

  /** A failed call: its status and the google.rpc.ErrorInfo of its status details (or null). */
  record Err(Status status, ErrorInfo info) {
    Status.Code code() { return status.getCode(); }
    String reason() { return info == null ? null : info.getReason(); }
    String meta(String key) { return info == null ? null : info.getMetadataOrDefault(key, null); }
  }

  /** The ErrorInfo in e's grpc-status-details-bin (StatusProto), or null; counts its domain. */
  static ErrorInfo errorInfo(StatusRuntimeException e) {
    com.google.rpc.Status st = StatusProto.fromThrowable(e);
    if (st == null) return null;
    ErrorInfo found = null;
    for (Any d : st.getDetailsList()) {
      if (d.is(ErrorInfo.class)) {
        try {
          found = d.unpack(ErrorInfo.class);
        } catch (InvalidProtocolBufferException x) {
          check(false, "ErrorInfo in the status details does not parse: " + x);
        }
      }
    }
    if (found != null) {
      check(found.getDomain().equals("smcrypt.v1") && st.getCode() == e.getStatus().getCode().value(),
          "ErrorInfo domain " + found.getDomain() + ", google.rpc.Status code " + st.getCode());
    }
    return found;
  }

  /** The failure of a call that must fail, or null when it succeeded. */
  static Err failure(Runnable call) {
    try {
      call.run();
      return null;
    } catch (StatusRuntimeException e) {
      return new Err(e.getStatus(), errorInfo(e));
    }
  }

  /** INVALID_ARGUMENT "decryption failed" with ErrorInfo reason DECRYPTION_FAILED. */
  static boolean isDecryptionFailed(Err e) {
    return e != null && e.code() == Status.Code.INVALID_ARGUMENT
        && "decryption failed".equals(e.status().getDescription())
        && "DECRYPTION_FAILED".equals(e.reason());
  }

  static String describe(Err e) {
    return e == null ? "OK" : e.code() + ": " + e.status().getDescription() + ", reason "
        + (e.info() == null ? "(no ErrorInfo)" : e.reason() + " " + e.info().getMetadataMap());
  }

  static String describe(Status s) {
    return s.getCode() + ": " + s.getDescription();
  }

  static CryptoServiceGrpc.CryptoServiceBlockingStub rpc() {
    return blocking.withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  // =========================================================================================

  public static void main(String[] args) throws Exception {
    if (args.length != 1 || System.getenv("SMCRYPT_TARGET") == null) {
      System.err.println("usage: SMCRYPT_TARGET=host:port [SMCRYPT_KEYS_DIR=DIR SMCRYPT_TLS_TARGET=..."
          + " SMCRYPT_MTLS_TARGET=... SMCRYPT_TLS_DIR=DIR] java InteropTest RFC9180_VECTORS");
      System.exit(2);
    }
    String s = System.getenv("SMCRYPT_TEST_SEED");
    seed = s != null ? s : Long.toUnsignedString(new SecureRandom().nextInt() & 0xffffffffL);
    bcRandom = new SeededRandom();
    String target = System.getenv("SMCRYPT_TARGET");
    System.out.println("java " + System.getProperty("java.version") + ", grpc-java "
        + io.grpc.ManagedChannelBuilder.class.getPackage().getImplementationVersion()
        + ", BouncyCastle " + org.bouncycastle.jce.provider.BouncyCastleProvider.class.getPackage()
            .getImplementationVersion()
        + ", smcryptd " + target + ", seed " + seed + " (SMCRYPT_TEST_SEED=" + seed
        + " repeats this run)");

    channel = NettyChannelBuilder.forTarget(target).usePlaintext().build();
    blocking = CryptoServiceGrpc.newBlockingStub(channel);
    async = CryptoServiceGrpc.newStub(channel);
    try {
      GetServerInfoResponse info = rpc().getServerInfo(GetServerInfoRequest.getDefaultInstance());
      check(info.getSelfTestsPassed(), "GetServerInfo: self-tests passed");
      System.out.println("smcryptd " + info.getVersion() + "; kernels "
          + info.getKernelsList().stream().map(k -> k.getAlgorithm() + "=" + k.getKernel())
              .reduce((a, b) -> a + " " + b).orElse(""));
      healthCheck();

      run("RFC 9180 A.3.1 vectors (Rfc9180Hpke)", () -> hpkeVectors(Path.of(args[0])));
      run("SM3", InteropTest::sm3Checks);
      run("HMAC-SM3", InteropTest::hmacChecks);
      run("SM4-CBC, SM4-ECB, SM4-CTR", InteropTest::sm4BlockModeChecks);
      run("SM4-GCM", InteropTest::sm4GcmChecks);
      run("SM4-CFB, SM4-OFB (unary and streams)", InteropTest::sm4CfbOfbChecks);
      run("SM2 signatures", InteropTest::sm2SignatureChecks);
      run("SM2 encryption", InteropTest::sm2EncryptionChecks);
      run("HPKE-P256-SHA256-AES128GCM", InteropTest::hpkeChecks);
      run("SM2 key exchange (KeyExchange)", InteropTest::keyExchangeChecks);
      run("keyring keys", InteropTest::keyringChecks);
      run("Rewrap and GenerateDataKey (EnvelopeChecks)", EnvelopeChecks::run);
      run("ListKeys (EnvelopeChecks)", EnvelopeChecks::listKeys);
      run("errors", InteropTest::errorChecks);
      run("TLS and mTLS", InteropTest::tlsChecks);
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed > 0 || passed == 0 ? 1 : 0);
  }

  interface Section { void run() throws Exception; }

  static void run(String name, Section section) {
    int before = passed + failed;
    long start = System.nanoTime();
    try {
      section.run();
    } catch (Exception | AssertionError e) {
      failed++;
      System.err.println("FAIL: " + name + ": " + e);
      e.printStackTrace();
    }
    System.out.printf("  %-44s %4d checks %6d ms%n", name, passed + failed - before,
        (System.nanoTime() - start) / 1_000_000);
  }

  static void healthCheck() {
    grpc.health.v1.HealthGrpc.HealthBlockingStub health =
        grpc.health.v1.HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    grpc.health.v1.HealthOuterClass.HealthCheckResponse h =
        health.check(grpc.health.v1.HealthOuterClass.HealthCheckRequest.getDefaultInstance());
    check(h.getStatus() == grpc.health.v1.HealthOuterClass.HealthCheckResponse.ServingStatus.SERVING,
        "health: " + h.getStatus());
  }

  // ---- BouncyCastle helpers ---------------------------------------------------------------

  static byte[] sm3(byte[] data) {
    SM3Digest d = new SM3Digest();
    d.update(data, 0, data.length);
    byte[] out = new byte[32];
    d.doFinal(out, 0);
    return out;
  }

  static byte[] hmacSm3(byte[] key, byte[] data) {
    HMac mac = new HMac(new SM3Digest());
    mac.init(new KeyParameter(key));
    mac.update(data, 0, data.length);
    byte[] out = new byte[32];
    mac.doFinal(out, 0);
    return out;
  }

  /** SM4 in ECB, CBC, CTR, CFB-128 or OFB with BouncyCastle; pkcs7 pads (ECB/CBC). */
  static byte[] sm4(boolean encrypt, Algorithm alg, boolean pkcs7, byte[] key, byte[] iv, byte[] in)
      throws InvalidCipherTextException {
    BlockCipher mode = switch (alg) {
      case SM4_ECB -> new SM4Engine();
      case SM4_CBC -> new CBCBlockCipher(new SM4Engine());
      case SM4_CTR -> new SICBlockCipher(new SM4Engine());
      case SM4_CFB -> new CFBBlockCipher(new SM4Engine(), 128);
      case SM4_OFB -> new OFBBlockCipher(new SM4Engine(), 128);
      default -> throw new IllegalArgumentException(alg.toString());
    };
    BufferedBlockCipher c = pkcs7 ? new PaddedBufferedBlockCipher(mode, new PKCS7Padding())
                                  : new BufferedBlockCipher(mode);
    CipherParameters params = alg == Algorithm.SM4_ECB ? new KeyParameter(key)
                                                       : new ParametersWithIV(new KeyParameter(key), iv);
    c.init(encrypt, params);
    byte[] out = new byte[c.getOutputSize(in.length)];
    int n = c.processBytes(in, 0, in.length, out, 0);
    n += c.doFinal(out, n);
    return Arrays.copyOf(out, n);
  }

  /** SM4-GCM with BouncyCastle: encrypt gives ct ‖ tag; decrypt takes ct ‖ tag. */
  static byte[] sm4Gcm(boolean encrypt, byte[] key, byte[] nonce, byte[] aad, int tagLen, byte[] in)
      throws InvalidCipherTextException {
    GCMBlockCipher gcm = new GCMBlockCipher(new SM4Engine());
    gcm.init(encrypt, new AEADParameters(new KeyParameter(key), tagLen * 8, nonce, aad));
    byte[] out = new byte[gcm.getOutputSize(in.length)];
    int n = gcm.processBytes(in, 0, in.length, out, 0);
    n += gcm.doFinal(out, n);
    return Arrays.copyOf(out, n);
  }

  static AsymmetricCipherKeyPair sm2KeyPair() {
    ECKeyPairGenerator gen = new ECKeyPairGenerator();
    gen.init(new ECKeyGenerationParameters(SM2_DOMAIN, bcRandom));
    return gen.generateKeyPair();
  }

  static byte[] scalar(ECPrivateKeyParameters k) { return BigIntegers.asUnsignedByteArray(32, k.getD()); }
  static byte[] point(ECPublicKeyParameters k, boolean compressed) { return k.getQ().getEncoded(compressed); }

  /** BouncyCastle SM2Signer: DER (StandardDSAEncoding) or raw r‖s (PlainDSAEncoding). */
  static byte[] bcSign(ECPrivateKeyParameters key, byte[] userId, byte[] msg, boolean raw)
      throws Exception {
    SM2Signer signer = new SM2Signer(raw ? PlainDSAEncoding.INSTANCE : StandardDSAEncoding.INSTANCE);
    CipherParameters p = new ParametersWithRandom(key, bcRandom);
    signer.init(true, userId == null ? p : new ParametersWithID(p, userId));
    signer.update(msg, 0, msg.length);
    return signer.generateSignature();
  }

  static boolean bcVerify(ECPublicKeyParameters key, byte[] userId, byte[] msg, byte[] sig, boolean raw) {
    DSAEncoding enc = raw ? PlainDSAEncoding.INSTANCE : StandardDSAEncoding.INSTANCE;
    SM2Signer signer = new SM2Signer(enc);
    signer.init(false, userId == null ? key : new ParametersWithID(key, userId));
    signer.update(msg, 0, msg.length);
    return signer.verifySignature(sig);
  }

  /** Z = SM3(ENTL ‖ ID ‖ a ‖ b ‖ xG ‖ yG ‖ xA ‖ yA), GB/T 32918.2 §5.5, computed here. */
  static byte[] sm2Z(ECPublicKeyParameters key, byte[] userId) {
    int bits = userId.length * 8;
    byte[] xy = SM2_CURVE.getG().getEncoded(false);
    byte[] pub = key.getQ().getEncoded(false);
    return sm3(concat(new byte[] {(byte) (bits >> 8), (byte) bits}, userId,
        BigIntegers.asUnsignedByteArray(32, SM2_CURVE.getCurve().getA().toBigInteger()),
        BigIntegers.asUnsignedByteArray(32, SM2_CURVE.getCurve().getB().toBigInteger()),
        Arrays.copyOfRange(xy, 1, 65), Arrays.copyOfRange(pub, 1, 65)));
  }

  static byte[] bcSm2Encrypt(ECPublicKeyParameters key, SM2Engine.Mode mode, byte[] pt) throws Exception {
    SM2Engine engine = new SM2Engine(mode);
    engine.init(true, new ParametersWithRandom(key, bcRandom));
    return engine.processBlock(pt, 0, pt.length);
  }

  /** BouncyCastle SM2Engine decryption; null when it refuses the ciphertext. */
  static byte[] bcSm2Decrypt(ECPrivateKeyParameters key, SM2Engine.Mode mode, byte[] ct) {
    SM2Engine engine = new SM2Engine(mode);
    engine.init(false, key);
    try {
      return engine.processBlock(ct, 0, ct.length);
    } catch (InvalidCipherTextException | RuntimeException e) {
      return null;
    }
  }

  /** DER SM2Cipher (GM/T 0009 §7.2) SEQUENCE { x, y, C3, C2 } ↔ C1C3C2, with BC's ASN.1. */
  static byte[] sm2CipherDer(byte[] c1c3c2) throws Exception {
    ASN1EncodableVector v = new ASN1EncodableVector();
    v.add(new ASN1Integer(new BigInteger(1, Arrays.copyOfRange(c1c3c2, 1, 33))));
    v.add(new ASN1Integer(new BigInteger(1, Arrays.copyOfRange(c1c3c2, 33, 65))));
    v.add(new DEROctetString(Arrays.copyOfRange(c1c3c2, 65, 97)));
    v.add(new DEROctetString(Arrays.copyOfRange(c1c3c2, 97, c1c3c2.length)));
    return new DERSequence(v).getEncoded("DER");
  }

  static byte[] sm2CipherFromDer(byte[] der) {
    ASN1Sequence seq = ASN1Sequence.getInstance(der);
    BigInteger x = ASN1Integer.getInstance(seq.getObjectAt(0)).getValue();
    BigInteger y = ASN1Integer.getInstance(seq.getObjectAt(1)).getValue();
    return concat(new byte[] {4}, BigIntegers.asUnsignedByteArray(32, x),
        BigIntegers.asUnsignedByteArray(32, y),
        ASN1OctetString.getInstance(seq.getObjectAt(2)).getOctets(),
        ASN1OctetString.getInstance(seq.getObjectAt(3)).getOctets());
  }

  // ---- RFC 9180 A.3.1: Rfc9180Hpke against the RFC before it is trusted --------------------

  static void hpkeVectors(Path file) throws Exception {
    // The file: "name: hex" lines; blank lines separate the setup, each encryption and export.
    List<Map<String, String>> blocks = new ArrayList<>();
    Map<String, String> block = new LinkedHashMap<>();
    for (String line : Files.readAllLines(file)) {
      if (line.startsWith("#")) continue;
      if (line.isBlank()) {
        if (!block.isEmpty()) blocks.add(block);
        block = new LinkedHashMap<>();
        continue;
      }
      int colon = line.indexOf(':');
      block.put(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
    }
    if (!block.isEmpty()) blocks.add(block);
    Map<String, String> setup = blocks.get(0);
    Function<String, byte[]> v = k -> HEX.parseHex(setup.get(k));
    check(setup.get("mode").equals("0") && setup.get("kem_id").equals("16")
        && setup.get("kdf_id").equals("1") && setup.get("aead_id").equals("1"),
        "RFC 9180 vectors: base mode, suite 0x0010/0x0001/0x0001");

    Rfc9180Hpke.KeyPair e = Rfc9180Hpke.deriveKeyPair(v.apply("ikmE"));
    Rfc9180Hpke.KeyPair r = Rfc9180Hpke.deriveKeyPair(v.apply("ikmR"));
    check(Arrays.equals(e.skBytes(), v.apply("skEm")) && Arrays.equals(e.pkBytes(), v.apply("pkEm")),
        "RFC 9180: DeriveKeyPair(ikmE) = skEm, pkEm");
    check(Arrays.equals(r.skBytes(), v.apply("skRm")) && Arrays.equals(r.pkBytes(), v.apply("pkRm")),
        "RFC 9180: DeriveKeyPair(ikmR) = skRm, pkRm");
    Rfc9180Hpke.Sender sender = Rfc9180Hpke.setupBaseS(r.pkBytes(), v.apply("info"), e);
    Rfc9180Hpke.Context c = sender.context();
    check(Arrays.equals(sender.enc(), v.apply("enc")), "RFC 9180: enc");
    check(Arrays.equals(c.sharedSecret, v.apply("shared_secret")), "RFC 9180: shared_secret");
    check(Arrays.equals(c.keyScheduleContext, v.apply("key_schedule_context")),
        "RFC 9180: key_schedule_context");
    check(Arrays.equals(c.secret, v.apply("secret")), "RFC 9180: secret");
    check(Arrays.equals(c.key, v.apply("key")), "RFC 9180: key");
    check(Arrays.equals(c.baseNonce, v.apply("base_nonce")), "RFC 9180: base_nonce");
    check(Arrays.equals(c.exporterSecret, v.apply("exporter_secret")), "RFC 9180: exporter_secret");
    Rfc9180Hpke.Context rc = Rfc9180Hpke.setupBaseR(v.apply("enc"), r, v.apply("info"));
    check(Arrays.equals(rc.key, c.key) && Arrays.equals(rc.baseNonce, c.baseNonce),
        "RFC 9180: SetupBaseR gives the sender's key and base_nonce");
    int encryptions = 0, exports = 0;
    for (Map<String, String> b : blocks.subList(1, blocks.size())) {
      if (b.containsKey("sequence number")) {
        long seq = Long.parseLong(b.get("sequence number"));
        byte[] pt = HEX.parseHex(b.get("pt")), aad = HEX.parseHex(b.get("aad"));
        byte[] ct = HEX.parseHex(b.get("ct"));
        check(Arrays.equals(c.nonce(seq), HEX.parseHex(b.get("nonce"))), "RFC 9180: nonce " + seq);
        c.setSequence(seq);
        check(Arrays.equals(c.seal(aad, pt), ct), "RFC 9180: seal at sequence number " + seq);
        rc.setSequence(seq);
        check(Arrays.equals(rc.open(aad, ct), pt), "RFC 9180: open at sequence number " + seq);
        encryptions++;
      } else if (b.containsKey("exported_value")) {
        byte[] got = c.export(HEX.parseHex(b.get("exporter_context")), Integer.parseInt(b.get("L")));
        check(Arrays.equals(got, HEX.parseHex(b.get("exported_value"))),
            "RFC 9180: export of context '" + b.get("exporter_context") + "'");
        exports++;
      }
    }
    check(encryptions >= 6 && exports >= 3,
        "RFC 9180 vectors: " + encryptions + " encryptions and " + exports + " exports read");
    byte[] tampered = HEX.parseHex(blocks.get(1).get("ct"));
    tampered[0] ^= 1;
    rc.setSequence(0);
    check(rc.open(HEX.parseHex(blocks.get(1).get("aad")), tampered) == null,
        "RFC 9180: a flipped ciphertext bit does not open");
  }

  // ---- SM3, HMAC-SM3 ------------------------------------------------------------------------

  static void sm3Checks() {
    byte[] abc = rpc().hash(HashRequest.newBuilder().setAlgorithm(Algorithm.SM3).setData(bs("abc"))
        .build()).getDigest().toByteArray();
    String kat = "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0";
    check(hex(abc).equals(kat) && hex(sm3("abc".getBytes(StandardCharsets.US_ASCII))).equals(kat),
        "SM3(abc) = GB/T 32905 A.1 in smcryptd (" + hex(abc) + ") and BouncyCastle");
    for (int n : new int[] {0, 1, 55, 56, 63, 64, 65, 1000, 65537}) {
      byte[] data = rand(n);
      byte[] got = rpc().hash(HashRequest.newBuilder().setAlgorithm(Algorithm.SM3).setData(bs(data))
          .build()).getDigest().toByteArray();
      check(Arrays.equals(got, sm3(data)), "SM3 " + n + " B: smcryptd " + hex(got) + ", BouncyCastle "
          + hex(sm3(data)));
    }
    // HashStream in uneven chunks equals BouncyCastle's digest of the whole.
    byte[] data = rand(200_000);
    List<HashStreamRequest> reqs = new ArrayList<>();
    for (int off = 0, i = 0; off < data.length; i++) {
      int len = Math.min(data.length - off, randInt(1, 70_000));
      HashStreamRequest.Builder b = HashStreamRequest.newBuilder()
          .setData(ByteString.copyFrom(data, off, len));
      if (i == 0) b.setAlgorithm(Algorithm.SM3);
      reqs.add(b.build());
      off += len;
    }
    CompletableFuture<HashStreamResponse> done = new CompletableFuture<>();
    StreamObserver<HashStreamRequest> up = async.withDeadlineAfter(20, TimeUnit.SECONDS)
        .hashStream(new StreamObserver<>() {
          public void onNext(HashStreamResponse r) { done.complete(r); }
          public void onError(Throwable t) { done.completeExceptionally(t); }
          public void onCompleted() {}
        });
    reqs.forEach(up::onNext);
    up.onCompleted();
    HashStreamResponse r = done.join();
    check(Arrays.equals(r.getDigest().toByteArray(), sm3(data)) && r.getTotalBytes() == data.length,
        "SM3 HashStream of " + reqs.size() + " chunks, 200000 B: BouncyCastle's digest");
  }

  static void hmacChecks() {
    for (int keyLen : new int[] {0, 1, 16, 32, 64, 65, 100}) {
      byte[] key = rand(keyLen), data = rand(randInt(0, 500));
      String what = "HMAC-SM3 key " + keyLen + " B, data " + data.length + " B";
      HmacRequest.Builder req = HmacRequest.newBuilder().setAlgorithm(Algorithm.HMAC_SM3)
          .setKey(inline(key)).setData(bs(data));
      byte[] mac = rpc().hmac(req.build()).getMac().toByteArray();
      byte[] theirs = hmacSm3(key, data);
      check(Arrays.equals(mac, theirs), what + ": smcryptd " + hex(mac) + ", BouncyCastle " + hex(theirs));
      check(rpc().hmac(req.setExpectedMac(bs(theirs)).build()).getValid(),
          what + ": smcryptd accepts BouncyCastle's tag");
      check(rpc().hmac(req.setExpectedMac(bs(Arrays.copyOf(theirs, 16))).build()).getValid(),
          what + ": smcryptd accepts BouncyCastle's tag truncated to 16 bytes");
      byte[] flipped = theirs.clone();
      flipped[randInt(0, 31)] ^= (byte) (1 << randInt(0, 7));
      check(!rpc().hmac(req.setExpectedMac(bs(flipped)).build()).getValid(),
          what + ": smcryptd rejects a flipped bit of BouncyCastle's tag");
    }
  }

  // ---- SM4 -----------------------------------------------------------------------------------

  static void sm4BlockModeChecks() throws Exception {
    for (int n : new int[] {0, 1, 15, 16, 17, 100, 4096}) {
      for (Algorithm alg : new Algorithm[] {Algorithm.SM4_CBC, Algorithm.SM4_ECB, Algorithm.SM4_CTR}) {
        for (boolean pkcs7 : new boolean[] {true, false}) {
          if (alg == Algorithm.SM4_CTR && !pkcs7) continue;  // CTR has no padding
          if (alg != Algorithm.SM4_CTR && !pkcs7 && n % 16 != 0) continue;
          boolean padded = pkcs7 && alg != Algorithm.SM4_CTR;
          Padding padding = alg == Algorithm.SM4_CTR ? Padding.PADDING_UNSPECIFIED
                          : pkcs7 ? Padding.PADDING_PKCS7 : Padding.PADDING_NONE;
          byte[] key = rand(16), iv = rand(16), pt = rand(n);
          String what = alg + " " + padding + " " + n + " B";
          byte[] theirs = sm4(true, alg, padded, key, iv, pt);
          EncryptRequest.Builder enc = EncryptRequest.newBuilder().setAlgorithm(alg)
              .setKey(inline(key)).setPlaintext(bs(pt)).setPadding(padding);
          if (alg != Algorithm.SM4_ECB) enc.setNonce(bs(iv));
          EncryptResponse ours = rpc().encrypt(enc.build());
          check(Arrays.equals(ours.getCiphertext().toByteArray(), theirs),
              what + ": smcryptd's ciphertext equals BouncyCastle's");
          check(Arrays.equals(sm4(false, alg, padded, key, iv, ours.getCiphertext().toByteArray()), pt),
              what + ": BouncyCastle decrypts smcryptd's ciphertext");
          DecryptRequest.Builder dec = DecryptRequest.newBuilder().setAlgorithm(alg).setKey(inline(key))
              .setCiphertext(bs(theirs)).setPadding(padding);
          if (alg != Algorithm.SM4_ECB) dec.setNonce(bs(iv));
          check(Arrays.equals(rpc().decrypt(dec.build()).getPlaintext().toByteArray(), pt),
              what + ": smcryptd decrypts BouncyCastle's ciphertext");
        }
      }
    }
    // CBC with the IV drawn by smcryptd (nonce unset): BouncyCastle decrypts with the one returned.
    byte[] key = rand(16), pt = rand(333);
    EncryptResponse drawn = rpc().encrypt(EncryptRequest.newBuilder().setAlgorithm(Algorithm.SM4_CBC)
        .setKey(inline(key)).setPlaintext(bs(pt)).build());
    check(drawn.getNonce().size() == 16 && Arrays.equals(sm4(false, Algorithm.SM4_CBC, true, key,
        drawn.getNonce().toByteArray(), drawn.getCiphertext().toByteArray()), pt),
        "SM4-CBC, IV drawn by smcryptd: BouncyCastle decrypts with the returned 16-byte IV");
  }

  static void sm4GcmChecks() throws Exception {
    int[] sizes = {0, 1, 15, 16, 17, 100, 4096, 70000};
    for (int i = 0; i < sizes.length; i++) {
      int n = sizes[i];
      int tagLen = new int[] {16, 12, 13, 16, 14, 15, 16, 12}[i];
      int nonceLen = new int[] {12, 12, 8, 12, 16, 1, 12, 60}[i];
      byte[] key = rand(16), nonce = rand(nonceLen), aad = rand(randInt(0, 40)), pt = rand(n);
      String what = "SM4-GCM " + n + " B, nonce " + nonceLen + " B, tag " + tagLen + " B, aad "
          + aad.length + " B";
      EncryptResponse ours = rpc().encrypt(EncryptRequest.newBuilder().setAlgorithm(Algorithm.SM4_GCM)
          .setKey(inline(key)).setNonce(bs(nonce)).setAad(bs(aad)).setTagLength(tagLen)
          .setPlaintext(bs(pt)).build());
      byte[] theirs = sm4Gcm(true, key, nonce, aad, tagLen, pt);
      byte[] oursJoined = concat(ours.getCiphertext().toByteArray(), ours.getTag().toByteArray());
      check(Arrays.equals(oursJoined, theirs) && ours.getTag().size() == tagLen,
          what + ": smcryptd's ciphertext ‖ tag equals BouncyCastle's");
      check(Arrays.equals(sm4Gcm(false, key, nonce, aad, tagLen, oursJoined), pt),
          what + ": BouncyCastle opens smcryptd's ciphertext");
      DecryptRequest.Builder dec = DecryptRequest.newBuilder().setAlgorithm(Algorithm.SM4_GCM)
          .setKey(inline(key)).setNonce(bs(nonce)).setAad(bs(aad))
          .setCiphertext(ByteString.copyFrom(theirs, 0, n))
          .setTag(ByteString.copyFrom(theirs, n, tagLen));
      check(Arrays.equals(rpc().decrypt(dec.build()).getPlaintext().toByteArray(), pt),
          what + ": smcryptd opens BouncyCastle's ciphertext");
      byte[] badTag = Arrays.copyOfRange(theirs, n, n + tagLen);
      badTag[randInt(0, tagLen - 1)] ^= (byte) (1 << randInt(0, 7));
      Err s = failure(() -> rpc().decrypt(dec.setTag(bs(badTag)).build()));
      check(isDecryptionFailed(s), what + ": a flipped tag bit is INVALID_ARGUMENT \"decryption "
          + "failed\" (got " + describe(s) + ")");
      Err a = failure(() -> rpc().decrypt(dec.setTag(ByteString.copyFrom(theirs, n, tagLen))
          .setAad(bs(concat(aad, new byte[] {1}))).build()));
      check(isDecryptionFailed(a), what + ": another aad is \"decryption failed\" (got "
          + describe(a) + ")");
    }
    // The nonce drawn by smcryptd (12 bytes), opened by BouncyCastle.
    byte[] key = rand(16), pt = rand(1000), aad = rand(7);
    EncryptResponse drawn = rpc().encrypt(EncryptRequest.newBuilder().setAlgorithm(Algorithm.SM4_GCM)
        .setKey(inline(key)).setAad(bs(aad)).setPlaintext(bs(pt)).build());
    check(drawn.getNonce().size() == 12 && Arrays.equals(sm4Gcm(false, key, drawn.getNonce().toByteArray(),
        aad, 16, concat(drawn.getCiphertext().toByteArray(), drawn.getTag().toByteArray())), pt),
        "SM4-GCM, nonce drawn by smcryptd: BouncyCastle opens it with the returned 12-byte nonce");
  }

  /** SM4 in CFB or OFB through BouncyCastle's JCE provider ("SM4/CFB/NoPadding", "SM4/OFB/NoPadding"). */
  static byte[] sm4Jce(boolean encrypt, Algorithm alg, byte[] key, byte[] iv, byte[] in) throws Exception {
    javax.crypto.Cipher c = javax.crypto.Cipher.getInstance(
        alg == Algorithm.SM4_CFB ? "SM4/CFB/NoPadding" : "SM4/OFB/NoPadding",
        new org.bouncycastle.jce.provider.BouncyCastleProvider());
    c.init(encrypt ? javax.crypto.Cipher.ENCRYPT_MODE : javax.crypto.Cipher.DECRYPT_MODE,
        new javax.crypto.spec.SecretKeySpec(key, "SM4"), new javax.crypto.spec.IvParameterSpec(iv));
    return c.doFinal(in);
  }

  static void sm4CfbOfbChecks() throws Exception {
    int[] sizes = {0, 1, 15, 16, 17, 100, 1000, randInt(0, 5000), randInt(0, 5000), randInt(0, 70000)};
    for (Algorithm alg : new Algorithm[] {Algorithm.SM4_CFB, Algorithm.SM4_OFB}) {
      for (int n : sizes) {
        byte[] key = rand(16), iv = rand(16), pt = rand(n);
        String what = alg + " " + n + " B";
        byte[] theirs = sm4(true, alg, false, key, iv, pt);
        check(theirs.length == n && Arrays.equals(sm4Jce(true, alg, key, iv, pt), theirs),
            what + ": BouncyCastle's CFBBlockCipher/OFBBlockCipher and its JCE cipher agree");
        EncryptResponse ours = rpc().encrypt(EncryptRequest.newBuilder().setAlgorithm(alg)
            .setKey(inline(key)).setNonce(bs(iv)).setPlaintext(bs(pt)).build());
        check(Arrays.equals(ours.getCiphertext().toByteArray(), theirs) && ours.getTag().isEmpty()
            && Arrays.equals(ours.getNonce().toByteArray(), iv),
            what + ": smcryptd's ciphertext equals BouncyCastle's");
        check(Arrays.equals(sm4(false, alg, false, key, iv, ours.getCiphertext().toByteArray()), pt),
            what + ": BouncyCastle decrypts smcryptd's ciphertext");
        check(Arrays.equals(rpc().decrypt(DecryptRequest.newBuilder().setAlgorithm(alg)
            .setKey(inline(key)).setNonce(bs(iv)).setCiphertext(bs(theirs)).build())
            .getPlaintext().toByteArray(), pt),
            what + ": smcryptd decrypts BouncyCastle's ciphertext");
      }
      // The IV drawn by smcryptd: the JCE cipher decrypts with the one returned.
      byte[] key = rand(16), pt = rand(333);
      EncryptResponse drawn = rpc().encrypt(EncryptRequest.newBuilder().setAlgorithm(alg)
          .setKey(inline(key)).setPlaintext(bs(pt)).build());
      check(drawn.getNonce().size() == 16 && Arrays.equals(sm4Jce(false, alg, key,
          drawn.getNonce().toByteArray(), drawn.getCiphertext().toByteArray()), pt),
          alg + ", IV drawn by smcryptd: BouncyCastle's JCE cipher decrypts with the returned IV");

      // EncryptStream with odd chunk sizes equals BouncyCastle's one-shot ciphertext, and
      // DecryptStream takes BouncyCastle's ciphertext cut at other odd points.
      for (int round = 0; round < 3; round++) {
        byte[] sKey = rand(16), sIv = rand(16);
        byte[][] chunks = new byte[randInt(2, 8)][];
        for (int i = 0; i < chunks.length; i++) chunks[i] = rand(randInt(0, 2000) | (round == 0 ? 1 : 0));
        String what = alg + " stream of " + chunks.length + " chunks";
        List<EncryptStreamRequest> up = new ArrayList<>();
        up.add(EncryptStreamRequest.newBuilder().setParams(EncryptStreamParams.newBuilder()
            .setAlgorithm(alg).setKey(inline(sKey)).setNonce(bs(sIv))).setPlaintext(bs(chunks[0])).build());
        for (int i = 1; i < chunks.length; i++) {
          up.add(EncryptStreamRequest.newBuilder().setPlaintext(bs(chunks[i])).build());
        }
        List<EncryptStreamResponse> down = bidi(
            o -> async.withDeadlineAfter(20, TimeUnit.SECONDS).encryptStream(o), up);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (EncryptStreamResponse r : down) all.write(r.getCiphertext().toByteArray());
        byte[] whole = concat(chunks);
        byte[] theirs = sm4(true, alg, false, sKey, sIv, whole);
        check(!down.isEmpty() && Arrays.equals(down.get(0).getNonce().toByteArray(), sIv)
            && down.get(down.size() - 1).getLast() && Arrays.equals(all.toByteArray(), theirs),
            what + ": EncryptStream's ciphertext equals BouncyCastle's one-shot ciphertext");
        List<DecryptStreamRequest> pieces = new ArrayList<>();
        pieces.add(DecryptStreamRequest.newBuilder().setParams(DecryptStreamParams.newBuilder()
            .setAlgorithm(alg).setKey(inline(sKey)).setNonce(bs(sIv))).build());
        for (int off = 0, step; off < theirs.length; off += step) {
          step = Math.min(randInt(1, 700), theirs.length - off);
          pieces.add(DecryptStreamRequest.newBuilder()
              .setCiphertext(ByteString.copyFrom(theirs, off, step)).build());
        }
        List<DecryptStreamResponse> opened = bidi(
            o -> async.withDeadlineAfter(20, TimeUnit.SECONDS).decryptStream(o), pieces);
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        for (DecryptStreamResponse r : opened) plain.write(r.getPlaintext().toByteArray());
        check(Arrays.equals(plain.toByteArray(), whole),
            what + ": DecryptStream of BouncyCastle's ciphertext in " + (pieces.size() - 1)
                + " odd pieces gives the plaintext");
      }
    }
  }

  // ---- SM2 signatures -------------------------------------------------------------------------

  static SignatureOptions options(byte[] userId, boolean raw) {
    SignatureOptions.Builder o = SignatureOptions.newBuilder();
    if (userId != null) o.setUserId(bs(userId));
    if (raw) o.setEncoding(SignatureEncoding.SIGNATURE_ENCODING_RAW);
    return o.build();
  }

  static byte[] sign(KeyRef key, byte[] msg, SignatureOptions options) {
    return rpc().sign(SignRequest.newBuilder().setAlgorithm(Algorithm.SM2).setKey(key)
        .setData(bs(msg)).setOptions(options).build()).getSignature().toByteArray();
  }

  static boolean verify(KeyRef key, byte[] msg, byte[] sig, SignatureOptions options) {
    return rpc().verify(VerifyRequest.newBuilder().setAlgorithm(Algorithm.SM2).setKey(key)
        .setData(bs(msg)).setSignature(bs(sig)).setOptions(options).build()).getValid();
  }

  static void sm2SignatureChecks() throws Exception {
    // (1) BouncyCastle's key pair, given to smcryptd raw (32-byte d; 65-byte, 33-byte point).
    AsymmetricCipherKeyPair kp = sm2KeyPair();
    ECPrivateKeyParameters priv = (ECPrivateKeyParameters) kp.getPrivate();
    ECPublicKeyParameters pub = (ECPublicKeyParameters) kp.getPublic();
    byte[] d = scalar(priv);
    byte[] spki = SubjectPublicKeyInfoFactory.createSubjectPublicKeyInfo(pub).getEncoded("DER");
    byte[] pkcs8 = PrivateKeyInfoFactory.createPrivateKeyInfo(priv).getEncoded("DER");
    Map<String, KeyRef> publicKeys = new LinkedHashMap<>();
    publicKeys.put("65-byte point", inline(point(pub, false)));
    publicKeys.put("33-byte compressed point", inline(point(pub, true)));
    publicKeys.put("BouncyCastle's SPKI DER", inline(spki));
    KeyRef[] privateKeys = {inline(d), inline(pkcs8)};
    int[] sizes = {0, 1, 32, 100, 1000, 5000};
    for (int i = 0; i < 12; i++) {
      byte[] msg = rand(sizes[i % 6]);
      // user IDs: default (unset), custom random bytes (not only text), empty, the default spelled out
      byte[] uid = switch (i % 4) {
        case 0 -> null;
        case 1 -> rand(randInt(1, 64));
        case 2 -> i == 2 ? new byte[0] : rand(randInt(100, 300));
        default -> DEFAULT_USER_ID;
      };
      String uidName = uid == null ? "default" : uid.length == 0 ? "empty" : uid.length + "-byte";
      String what = "SM2 " + msg.length + " B, user ID " + uidName;
      KeyRef signKey = privateKeys[i % 2];

      // smcryptd signs (DER by default, and raw), BouncyCastle's SM2Signer verifies.
      byte[] der = sign(signKey, msg, options(uid, false));
      check(der.length > 0 && der[0] == 0x30, what + ": smcryptd's signature is DER");
      check(bcVerify(pub, uid, msg, der, false), what + ": BouncyCastle verifies smcryptd's DER signature");
      check(!bcVerify(pub, uid, concat(msg, new byte[] {'x'}), der, false),
          what + ": BouncyCastle rejects it for another message");
      byte[] otherId = concat(uid == null ? DEFAULT_USER_ID : uid, new byte[] {'!'});
      check(!bcVerify(pub, otherId, msg, der, false), what + ": BouncyCastle rejects it under another user ID");
      byte[] raw = sign(signKey, msg, options(uid, true));
      check(raw.length == 64 && bcVerify(pub, uid, msg, raw, true),
          what + ": BouncyCastle (PlainDSAEncoding) verifies smcryptd's 64-byte r‖s signature");

      // BouncyCastle signs (DER and raw), smcryptd verifies with each form of the public key.
      byte[] theirDer = bcSign(priv, uid, msg, false);
      byte[] theirRaw = bcSign(priv, uid, msg, true);
      for (Map.Entry<String, KeyRef> k : publicKeys.entrySet()) {
        check(verify(k.getValue(), msg, theirDer, options(uid, false)),
            what + ": smcryptd verifies BouncyCastle's DER signature (" + k.getKey() + ")");
      }
      check(verify(inline(point(pub, false)), msg, theirRaw, options(uid, true)),
          what + ": smcryptd verifies BouncyCastle's raw r‖s signature");
      byte[] tampered = theirRaw.clone();
      tampered[randInt(0, 63)] ^= (byte) (1 << randInt(0, 7));
      check(!verify(inline(point(pub, false)), msg, tampered, options(uid, true)),
          what + ": smcryptd rejects a flipped bit in BouncyCastle's signature");
      check(!verify(inline(point(pub, false)), msg, theirDer, options(otherId, false)),
          what + ": smcryptd rejects BouncyCastle's signature under another user ID");
    }

    // (2) Prehashed: e = SM3(Z ‖ M) computed here (Z from the default user ID); smcryptd signs e,
    // BouncyCastle verifies as a signature of M, and the other way round.
    byte[] msg = rand(777);
    byte[] e = sm3(concat(sm2Z(pub, DEFAULT_USER_ID), msg));
    SignatureOptions pre = SignatureOptions.newBuilder().setPrehashed(true).build();
    check(bcVerify(pub, null, msg, sign(inline(d), e, pre), false),
        "SM2 prehashed: BouncyCastle verifies smcryptd's signature of e = SM3(Z‖M) as one of M");
    check(verify(inline(point(pub, false)), e, bcSign(priv, null, msg, false), pre),
        "SM2 prehashed: smcryptd verifies BouncyCastle's signature of M given e");

    // (3) smcryptd's key pair (PKCS#8 / SPKI DER), read by BouncyCastle's key factories.
    GenerateKeyPairResponse pair = rpc().generateKeyPair(
        GenerateKeyPairRequest.newBuilder().setAlgorithm(Algorithm.SM2).build());
    ECPrivateKeyParameters sPriv = (ECPrivateKeyParameters) PrivateKeyFactory.createKey(
        pair.getPrivateKeyDer().toByteArray());
    ECPublicKeyParameters sPub = (ECPublicKeyParameters) PublicKeyFactory.createKey(
        pair.getPublicKeyDer().toByteArray());
    check(sPub.getParameters().getCurve().equals(SM2_CURVE.getCurve())
        && sPub.getParameters().getG().multiply(sPriv.getD()).equals(sPub.getQ()),
        "SM2 GenerateKeyPair: BouncyCastle reads an sm2p256v1 PKCS#8 key whose d·G is the SPKI point");
    byte[] m2 = rand(200);
    byte[] sig = bcSign(sPriv, null, m2, false);
    check(verify(inline(pair.getPublicKeyDer()), m2, sig, options(null, false)),
        "SM2: smcryptd verifies BouncyCastle's signature with its own SPKI DER key");
    check(verify(inline(bs(pair.getPublicKeyPem())), m2, sig, options(null, false)),
        "SM2: smcryptd verifies BouncyCastle's signature with its own SPKI PEM key");
    check(bcVerify(sPub, null, m2, sign(inline(pair.getPrivateKeyDer()), m2, options(null, false)), false),
        "SM2: BouncyCastle verifies smcryptd's signature with the key smcryptd generated");
  }

  // ---- SM2 encryption -----------------------------------------------------------------------

  static byte[] sm2Encrypt(KeyRef key, byte[] pt, Sm2CiphertextFormat format) {
    return rpc().publicKeyEncrypt(PublicKeyEncryptRequest.newBuilder().setAlgorithm(Algorithm.SM2)
        .setKey(key).setPlaintext(bs(pt)).setSm2Format(format).build()).getCiphertext().toByteArray();
  }

  static byte[] sm2Decrypt(KeyRef key, byte[] ct, Sm2CiphertextFormat format) {
    return rpc().publicKeyDecrypt(PublicKeyDecryptRequest.newBuilder().setAlgorithm(Algorithm.SM2)
        .setKey(key).setCiphertext(bs(ct)).setSm2Format(format).build()).getPlaintext().toByteArray();
  }

  static void sm2EncryptionChecks() throws Exception {
    AsymmetricCipherKeyPair kp = sm2KeyPair();
    ECPrivateKeyParameters priv = (ECPrivateKeyParameters) kp.getPrivate();
    ECPublicKeyParameters pub = (ECPublicKeyParameters) kp.getPublic();
    KeyRef pubKey = inline(point(pub, false)), privKey = inline(scalar(priv));
    Sm2CiphertextFormat unset = Sm2CiphertextFormat.SM2_CIPHERTEXT_FORMAT_UNSPECIFIED;
    Sm2CiphertextFormat c1c3c2 = Sm2CiphertextFormat.SM2_CIPHERTEXT_FORMAT_C1C3C2;
    Sm2CiphertextFormat c1c2c3 = Sm2CiphertextFormat.SM2_CIPHERTEXT_FORMAT_C1C2C3;
    Sm2CiphertextFormat derFormat = Sm2CiphertextFormat.SM2_CIPHERTEXT_FORMAT_DER;
    for (int n : new int[] {1, 15, 32, 33, 100, 1000, 10000}) {
      byte[] pt = rand(n);
      String what = "SM2 encryption " + n + " B";
      // smcryptd encrypts, BouncyCastle's SM2Engine decrypts.
      byte[] def = sm2Encrypt(pubKey, pt, unset);
      check(def.length == 97 + n && def[0] == 4, what + ": smcryptd's default is 97 + n bytes, C1 = 04‖x‖y");
      check(Arrays.equals(bcSm2Decrypt(priv, SM2Engine.Mode.C1C3C2, def), pt),
          what + ": SM2Engine Mode.C1C3C2 decrypts smcryptd's default format");
      check(Arrays.equals(bcSm2Decrypt(priv, SM2Engine.Mode.C1C3C2, sm2Encrypt(pubKey, pt, c1c3c2)), pt),
          what + ": SM2Engine Mode.C1C3C2 decrypts smcryptd's SM2_CIPHERTEXT_FORMAT_C1C3C2");
      byte[] ours123 = sm2Encrypt(pubKey, pt, c1c2c3);
      check(Arrays.equals(bcSm2Decrypt(priv, SM2Engine.Mode.C1C2C3, ours123), pt),
          what + ": SM2Engine Mode.C1C2C3 decrypts smcryptd's SM2_CIPHERTEXT_FORMAT_C1C2C3");
      check(bcSm2Decrypt(priv, SM2Engine.Mode.C1C2C3, def) == null,
          what + ": SM2Engine Mode.C1C2C3 refuses smcryptd's C1C3C2");
      byte[] oursDer = sm2Encrypt(pubKey, pt, derFormat);
      check(Arrays.equals(bcSm2Decrypt(priv, SM2Engine.Mode.C1C3C2, sm2CipherFromDer(oursDer)), pt),
          what + ": smcryptd's DER SM2Cipher, read with BC's ASN.1, decrypts in SM2Engine");

      // BouncyCastle encrypts, smcryptd decrypts.
      byte[] t132 = bcSm2Encrypt(pub, SM2Engine.Mode.C1C3C2, pt);
      byte[] t123 = bcSm2Encrypt(pub, SM2Engine.Mode.C1C2C3, pt);
      check(Arrays.equals(sm2Decrypt(privKey, t132, unset), pt),
          what + ": smcryptd (default format) decrypts SM2Engine's Mode.C1C3C2");
      check(Arrays.equals(sm2Decrypt(inline(PrivateKeyInfoFactory.createPrivateKeyInfo(
          new ECPrivateKeyParameters(priv.getD(), SM2_DOMAIN)).getEncoded("DER")), t132, c1c3c2), pt),
          what + ": smcryptd decrypts SM2Engine's Mode.C1C3C2 with BouncyCastle's PKCS#8 key");
      check(Arrays.equals(sm2Decrypt(privKey, t123, c1c2c3), pt),
          what + ": smcryptd decrypts SM2Engine's Mode.C1C2C3 as SM2_CIPHERTEXT_FORMAT_C1C2C3");
      check(Arrays.equals(sm2Decrypt(privKey, sm2CipherDer(t132), derFormat), pt),
          what + ": smcryptd decrypts SM2Engine's ciphertext as DER SM2Cipher (BC's ASN.1)");
      byte[] flipped = t132.clone();
      flipped[65 + randInt(0, 31)] ^= 1;  // a bit of C3
      Err s = failure(() -> sm2Decrypt(privKey, flipped, unset));
      check(isDecryptionFailed(s), what + ": a flipped C3 bit is \"decryption failed\" (got "
          + describe(s) + ")");
      Err w = failure(() -> sm2Decrypt(privKey, t132, c1c2c3));
      check(isDecryptionFailed(w), what + ": C1C3C2 read as C1C2C3 is \"decryption failed\" (got "
          + describe(w) + ")");
    }
  }

  // ---- HPKE-P256-SHA256-AES128GCM ------------------------------------------------------------

  static final Algorithm HPKE_P256 = Algorithm.HPKE_P256_SHA256_AES128GCM;

  /** Opens the one-shot wire format (header ‖ enc ‖ ct ‖ tag) with Rfc9180Hpke; null on failure. */
  static byte[] hpkeOpen(Rfc9180Hpke.KeyPair recipient, byte[] wire, byte[] info) {
    if (wire.length < 88 || !Arrays.equals(Arrays.copyOf(wire, 7), HPKE_HEADER)) return null;
    Rfc9180Hpke.Context ctx = Rfc9180Hpke.setupBaseR(Arrays.copyOfRange(wire, 7, 72), recipient, info);
    return ctx.open(HPKE_HEADER, Arrays.copyOfRange(wire, 72, wire.length));
  }

  static byte[] hpkeSeal(byte[] pkR, byte[] pt, byte[] info) {
    Rfc9180Hpke.Sender s = Rfc9180Hpke.setupBaseS(pkR, info, bcRandom);
    return concat(HPKE_HEADER, s.enc(), s.context().seal(HPKE_HEADER, pt));
  }

  static <Req, Resp> List<Resp> bidi(
      Function<StreamObserver<Resp>, StreamObserver<Req>> method, List<Req> requests) {
    CompletableFuture<List<Resp>> done = new CompletableFuture<>();
    List<Resp> out = new ArrayList<>();
    StreamObserver<Req> up = method.apply(new StreamObserver<>() {
      public void onNext(Resp r) { out.add(r); }
      public void onError(Throwable t) { done.completeExceptionally(t); }
      public void onCompleted() { done.complete(out); }
    });
    requests.forEach(up::onNext);
    up.onCompleted();
    return done.join();
  }

  static void hpkeChecks() throws Exception {
    // (a) smcryptd seals to Rfc9180Hpke's key (the raw 65-byte point inline); Java opens.
    Rfc9180Hpke.KeyPair r = Rfc9180Hpke.generateKeyPair(bcRandom);
    for (int n : new int[] {0, 1, 1000, 100000}) {
      byte[] pt = rand(n), info = rand(randInt(0, 30));
      byte[] wire = rpc().hybridEncrypt(HybridEncryptRequest.newBuilder().setAlgorithm(HPKE_P256)
          .setKey(inline(r.pkBytes())).setPlaintext(bs(pt)).setInfo(bs(info)).build())
          .getCiphertext().toByteArray();
      check(wire.length == n + 88 && Arrays.equals(Arrays.copyOf(wire, 7), HPKE_HEADER),
          "HPKE " + n + " B: smcryptd's wire is header 01 0010 0001 0001 ‖ enc ‖ ct ‖ tag");
      check(Arrays.equals(hpkeOpen(r, wire, info), pt), "HPKE " + n + " B: Java opens smcryptd's HybridEncrypt");
      check(hpkeOpen(r, wire, concat(info, new byte[] {1})) == null,
          "HPKE " + n + " B: Java does not open it under another info");
    }
    // (a') HybridEncryptBatch: every item opens, each with a fresh enc.
    List<HybridEncryptRequest> items = new ArrayList<>();
    for (int n : new int[] {0, 1, 33, 1000, 5000}) {
      items.add(HybridEncryptRequest.newBuilder().setAlgorithm(HPKE_P256).setKey(inline(r.pkBytes()))
          .setPlaintext(bs(rand(n))).setInfo(bs(rand(randInt(0, 30)))).build());
    }
    HybridEncryptBatchResponse batch = rpc().hybridEncryptBatch(
        HybridEncryptBatchRequest.newBuilder().addAllItems(items).build());
    Set<String> encs = new HashSet<>();
    boolean allOpen = batch.getResultsCount() == items.size();
    for (int i = 0; allOpen && i < items.size(); i++) {
      byte[] wire = batch.getResults(i).getCiphertext().toByteArray();
      encs.add(hex(Arrays.copyOfRange(wire, 7, Math.min(72, wire.length))));
      allOpen = batch.getResults(i).getStatus().getCode() == 0 && Arrays.equals(
          hpkeOpen(r, wire, items.get(i).getInfo().toByteArray()), items.get(i).getPlaintext().toByteArray());
    }
    check(allOpen && encs.size() == items.size(),
        "HybridEncryptBatch: Java opens all " + items.size() + " items, each with its own enc");

    // (b) smcryptd's key pair: Java seals to its SPKI point, smcryptd opens with its PKCS#8.
    GenerateKeyPairResponse pair = rpc().generateKeyPair(
        GenerateKeyPairRequest.newBuilder().setAlgorithm(HPKE_P256).build());
    ECPublicKeyParameters spk = (ECPublicKeyParameters) PublicKeyFactory.createKey(
        pair.getPublicKeyDer().toByteArray());
    byte[] pkR = spk.getQ().getEncoded(false);
    ECPrivateKeyParameters ssk = (ECPrivateKeyParameters) PrivateKeyFactory.createKey(
        pair.getPrivateKeyDer().toByteArray());
    check(Arrays.equals(Rfc9180Hpke.keyPairOf(ssk.getD()).pkBytes(), pkR),
        "HPKE GenerateKeyPair: BouncyCastle reads a P-256 PKCS#8 key whose d·G is the SPKI point");
    for (int n : new int[] {0, 1, 1000, 100000}) {
      byte[] pt = rand(n), info = rand(10);
      byte[] wire = hpkeSeal(pkR, pt, info);
      HybridDecryptRequest.Builder dec = HybridDecryptRequest.newBuilder().setAlgorithm(HPKE_P256)
          .setKey(inline(pair.getPrivateKeyDer())).setCiphertext(bs(wire)).setInfo(bs(info));
      check(Arrays.equals(rpc().hybridDecrypt(dec.build()).getPlaintext().toByteArray(), pt),
          "HPKE " + n + " B: smcryptd opens Java's seal");
      Err s = failure(() -> rpc().hybridDecrypt(dec.setInfo(bs(concat(info, new byte[] {'x'}))).build()));
      check(isDecryptionFailed(s), "HPKE " + n + " B: another info is \"decryption failed\" (got "
          + describe(s) + ")");
      byte[] badTag = wire.clone();
      badTag[badTag.length - 1 - randInt(0, 15)] ^= 1;
      Err t = failure(() -> rpc().hybridDecrypt(dec.setInfo(bs(info)).setCiphertext(bs(badTag)).build()));
      check(isDecryptionFailed(t), "HPKE " + n + " B: a flipped tag bit is \"decryption failed\" (got "
          + describe(t) + ")");
    }
    // Java's HPKE with smcryptd's raw 32-byte scalar too (inline raw private key).
    byte[] pt = rand(64);
    check(Arrays.equals(rpc().hybridDecrypt(HybridDecryptRequest.newBuilder().setAlgorithm(HPKE_P256)
        .setKey(inline(BigIntegers.asUnsignedByteArray(32, ssk.getD())))
        .setCiphertext(bs(hpkeSeal(pkR, pt, new byte[0]))).build()).getPlaintext().toByteArray(), pt),
        "HPKE: smcryptd opens Java's seal with the raw 32-byte scalar");

    // (c) HybridEncryptStream opened chunk by chunk on one Java context (sequence numbers 0, 1, …).
    byte[] sInfo = bs("stream info").toByteArray(), sAad = rand(12);
    byte[][] chunks = {rand(1), rand(5000), rand(70000)};
    List<HybridEncryptStreamRequest> up = new ArrayList<>();
    up.add(HybridEncryptStreamRequest.newBuilder().setParams(HybridStreamParams.newBuilder()
        .setAlgorithm(HPKE_P256).setKey(inline(r.pkBytes())).setInfo(bs(sInfo)).setAad(bs(sAad))).build());
    for (byte[] c : chunks) up.add(HybridEncryptStreamRequest.newBuilder().setPlaintext(bs(c)).build());
    List<HybridEncryptStreamResponse> down = bidi(
        o -> async.withDeadlineAfter(20, TimeUnit.SECONDS).hybridEncryptStream(o), up);
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (HybridEncryptStreamResponse resp : down) all.write(resp.getCiphertext().toByteArray());
    byte[] wire = all.toByteArray();
    List<byte[]> got = new ArrayList<>();
    int lastFlag = -1;
    if (Arrays.equals(Arrays.copyOf(wire, 7), HPKE_HEADER)) {
      Rfc9180Hpke.Context ctx = Rfc9180Hpke.setupBaseR(Arrays.copyOfRange(wire, 7, 72), r, sInfo);
      for (int off = 72; off < wire.length; ) {
        int flag = wire[off];
        int len = new BigInteger(1, Arrays.copyOfRange(wire, off + 1, off + 5)).intValue();
        got.add(ctx.open(concat(HPKE_HEADER, new byte[] {(byte) flag}, sAad),
            Arrays.copyOfRange(wire, off + 5, off + 5 + len)));
        lastFlag = flag;
        off += 5 + len;
      }
    }
    boolean streamOk = got.size() == chunks.length + 1 && lastFlag == 1
        && got.get(chunks.length) != null && got.get(chunks.length).length == 0;
    for (int i = 0; streamOk && i < chunks.length; i++) streamOk = Arrays.equals(got.get(i), chunks[i]);
    check(streamOk, "HPKE stream: Java opens every chunk of HybridEncryptStream in order, then the empty "
        + "final chunk (flag 01)");

    // (d) Java seals a stream on one sender context; HybridDecryptStream opens it.
    Rfc9180Hpke.Sender sender = Rfc9180Hpke.setupBaseS(pkR, sInfo, bcRandom);
    ByteArrayOutputStream theirs = new ByteArrayOutputStream();
    theirs.write(HPKE_HEADER);
    theirs.write(sender.enc());
    for (int i = 0; i <= chunks.length; i++) {
      byte flag = (byte) (i == chunks.length ? 1 : 0);
      byte[] ct = sender.context().seal(concat(HPKE_HEADER, new byte[] {flag}, sAad),
          i == chunks.length ? new byte[0] : chunks[i]);
      theirs.write(flag);
      theirs.write(Rfc9180Hpke.i2osp(ct.length, 4));
      theirs.write(ct);
    }
    byte[] t = theirs.toByteArray();
    List<HybridDecryptStreamRequest> pieces = new ArrayList<>();
    pieces.add(HybridDecryptStreamRequest.newBuilder().setParams(HybridStreamParams.newBuilder()
        .setAlgorithm(HPKE_P256).setKey(inline(pair.getPrivateKeyDer())).setInfo(bs(sInfo))
        .setAad(bs(sAad))).build());
    for (int off = 0; off < t.length; off += 7777) {
      pieces.add(HybridDecryptStreamRequest.newBuilder()
          .setCiphertext(ByteString.copyFrom(t, off, Math.min(7777, t.length - off))).build());
    }
    List<HybridDecryptStreamResponse> opened = bidi(
        o -> async.withDeadlineAfter(20, TimeUnit.SECONDS).hybridDecryptStream(o), pieces);
    ByteArrayOutputStream plain = new ByteArrayOutputStream();
    for (HybridDecryptStreamResponse resp : opened) plain.write(resp.getPlaintext().toByteArray());
    check(Arrays.equals(plain.toByteArray(), concat(chunks)) && !opened.isEmpty()
        && opened.get(opened.size() - 1).getLast(),
        "HPKE stream: smcryptd's HybridDecryptStream opens Java's chunks (sent in 7777-byte pieces)");
  }

  // ---- SM2 key exchange (KeyExchange stream) against BouncyCastle's SM2KeyExchange ---------

  /**
   * One KeyExchange stream on the async stub. Requests are sent one at a time and each
   * response (or the stream's end) is taken from a queue, so the test can relay each message
   * between smcryptd and BouncyCastle as a real caller would (the blocking stub has no bidi).
   */
  static final class KexStream implements AutoCloseable {
    private static final Object END = new Object();
    private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    private final StreamObserver<KeyExchangeRequest> up;
    private boolean ended;

    KexStream() {
      up = async.withDeadlineAfter(20, TimeUnit.SECONDS).keyExchange(new StreamObserver<>() {
        public void onNext(KeyExchangeResponse r) { events.add(r); }
        public void onError(Throwable t) { events.add(t); }
        public void onCompleted() { events.add(END); }
      });
    }

    void send(KeyExchangeRequest r) { up.onNext(r); }

    private Object take() throws InterruptedException {
      Object e = events.poll(25, TimeUnit.SECONDS);
      if (e == null) throw new IllegalStateException("KeyExchange: nothing from smcryptd within 25 s");
      if (!(e instanceof KeyExchangeResponse)) ended = true;
      return e;
    }

    /** The next response; throws (with the status) when the stream ended instead. */
    KeyExchangeResponse next() throws InterruptedException {
      Object e = take();
      if (e instanceof KeyExchangeResponse r) return r;
      if (e instanceof Throwable t) throw Status.fromThrowable(t).asRuntimeException();
      throw new IllegalStateException("KeyExchange: the stream ended OK before the next response");
    }

    /** Half-closes and returns how the stream ended (a further response is UNKNOWN here). */
    Status finish() throws InterruptedException {
      up.onCompleted();
      return end();
    }

    /** How the stream ends without a half-close: the status of a call that must fail now. */
    Status end() throws InterruptedException {
      Object e = take();
      if (e == END) return Status.OK;
      if (e instanceof Throwable t) return Status.fromThrowable(t);
      ended = true;
      return Status.UNKNOWN.withDescription("a response instead of the end: shared_key "
          + ((KeyExchangeResponse) e).getSharedKey().size() + " B");
    }

    @Override public void close() {
      if (!ended) up.onError(Status.CANCELLED.withDescription("test done").asException());
    }
  }

  /** BouncyCastle's party: its long-term key, its ephemeral key and its user ID. */
  static SM2KeyExchange bcKex(boolean initiator, ECPrivateKeyParameters d, ECPrivateKeyParameters r,
      byte[] id) {
    SM2KeyExchange kx = new SM2KeyExchange();
    kx.init(new ParametersWithID(new SM2KeyExchangePrivateParameters(initiator, d, r), id));
    return kx;
  }

  /** The other party as BouncyCastle sees it: long-term and ephemeral public keys, user ID. */
  static CipherParameters bcKexPeer(ECPublicKeyParameters p, ECPublicKeyParameters r, byte[] id) {
    return new ParametersWithID(new SM2KeyExchangePublicParameters(p, r), id);
  }

  /** smcryptd's ephemeral point (65 bytes, 04‖x‖y) as a BouncyCastle public key. */
  static ECPublicKeyParameters sm2PointOf(ByteString b, String what) {
    check(b.size() == 65 && b.byteAt(0) == 4, what + ": smcryptd's ephemeral point is 65 bytes 04‖x‖y (got "
        + b.size() + " B)");
    return new ECPublicKeyParameters(SM2_CURVE.getCurve().decodePoint(b.toByteArray()), SM2_DOMAIN);
  }

  static byte[] flipByte(byte[] b) {
    byte[] out = b.clone();
    out[randInt(0, out.length - 1)] ^= (byte) (1 << randInt(0, 7));
    return out;
  }

  /**
   * One exchange's inputs. serverId / peerId null: user_id / peer_user_id absent on the
   * wire (smcryptd uses 1234567812345678) and BouncyCastle is given DEFAULT_USER_ID.
   * bcPeerId: the ID BouncyCastle uses for smcryptd's side (normally serverId).
   * tamper: flip a byte of the confirmation value relayed to smcryptd.
   */
  record Kex(boolean serverInitiator, boolean confirmation, int klen, byte[] serverId, byte[] peerId,
      boolean spkiPeerKey, byte[] bcPeerId, boolean tamper) {
    String name() {
      return "KeyExchange smcryptd " + (serverInitiator ? "initiator, BC responder" : "responder, BC initiator")
          + (confirmation ? ", confirmation" : ", no confirmation") + ", klen " + klen
          + (serverId == null ? ", default IDs" : ", IDs " + serverId.length + "/" + peerId.length + " B")
          + (spkiPeerKey ? ", peer SPKI" : ", peer point")
          + (tamper ? ", flipped " + (serverInitiator ? "S_B" : "S_A") : "")
          + (bcPeerId != serverId ? ", BC has another ID for smcryptd" : "");
    }
  }

  static KeyExchangeParams kexParams(Kex c, ECPrivateKeyParameters serverKey, ECPublicKeyParameters peerKey)
      throws Exception {
    byte[] pkcs8 = PrivateKeyInfoFactory.createPrivateKeyInfo(
        new ECPrivateKeyParameters(serverKey.getD(), SM2_DOMAIN)).getEncoded("DER");
    byte[] peer = c.spkiPeerKey()
        ? SubjectPublicKeyInfoFactory.createSubjectPublicKeyInfo(peerKey).getEncoded("DER")
        : point(peerKey, false);
    KeyExchangeParams.Builder p = KeyExchangeParams.newBuilder().setAlgorithm(Algorithm.SM2)
        .setKey(inline(pkcs8)).setPeerKey(inline(peer)).setKeyLength(c.klen())
        .setConfirmation(c.confirmation())
        .setRole(c.serverInitiator() ? KeyExchangeRole.KEY_EXCHANGE_ROLE_INITIATOR
                                     : KeyExchangeRole.KEY_EXCHANGE_ROLE_RESPONDER);
    if (c.serverId() != null) p.setUserId(bs(c.serverId())).setPeerUserId(bs(c.peerId()));
    return p.build();
  }

  /** Runs one exchange between smcryptd and BouncyCastle; checks K (and S_A / S_B) agree. */
  static void kexCase(Kex c) throws Exception {
    String what = c.name();
    int kbits = c.klen() * 8;
    byte[] serverId = c.serverId() == null ? DEFAULT_USER_ID : c.serverId();
    byte[] peerId = c.peerId() == null ? DEFAULT_USER_ID : c.peerId();
    byte[] bcPeerId = c.bcPeerId() == null ? DEFAULT_USER_ID : c.bcPeerId();
    boolean mustFail = c.tamper() || !Arrays.equals(bcPeerId, serverId);
    // Both long-term key pairs made by BouncyCastle; smcryptd gets its own as PKCS#8 DER.
    AsymmetricCipherKeyPair server = sm2KeyPair(), bc = sm2KeyPair(), eph = sm2KeyPair();
    ECPrivateKeyParameters serverD = (ECPrivateKeyParameters) server.getPrivate();
    ECPublicKeyParameters serverP = (ECPublicKeyParameters) server.getPublic();
    ECPrivateKeyParameters bcD = (ECPrivateKeyParameters) bc.getPrivate();
    ECPublicKeyParameters bcP = (ECPublicKeyParameters) bc.getPublic();
    ECPrivateKeyParameters bcR = (ECPrivateKeyParameters) eph.getPrivate();
    ECPublicKeyParameters bcRPub = (ECPublicKeyParameters) eph.getPublic();
    KeyExchangeParams params = kexParams(c, serverD, bcP);

    try (KexStream s = new KexStream()) {
      if (c.serverInitiator()) {
        // 1. params → R_A.
        s.send(KeyExchangeRequest.newBuilder().setParams(params).build());
        KeyExchangeResponse first = s.next();
        check(first.getSharedKey().isEmpty() && first.getConfirmation().isEmpty(),
            what + ": the first response carries R_A only");
        ECPublicKeyParameters ra = sm2PointOf(first.getEphemeralPoint(), what);
        // BouncyCastle's responder B: K (and S_B, and the S_A it expects from A).
        SM2KeyExchange b = bcKex(false, bcD, bcR, peerId);
        CipherParameters a = bcKexPeer(serverP, ra, bcPeerId);
        byte[] k, sb = null, expectedSa = null;
        if (c.confirmation()) {
          byte[][] r = b.calculateKeyWithConfirmation(kbits, null, a);
          k = r[0];
          sb = c.tamper() ? flipByte(r[1]) : r[1];
          expectedSa = r[2];
        } else {
          k = b.calculateKey(kbits, a);
        }
        // 2. R_B (+ S_B) → K (+ S_A).
        KeyExchangeRequest.Builder second = KeyExchangeRequest.newBuilder()
            .setPeerEphemeralPoint(bs(point(bcRPub, false)));
        if (sb != null) second.setPeerConfirmation(bs(sb));
        s.send(second.build());
        if (mustFail && c.confirmation()) {
          Status st = s.end();
          check(st.getCode() == Status.Code.UNAUTHENTICATED && st.getDescription() != null
              && st.getDescription().contains("S_B does not match"),
              what + ": smcryptd refuses BouncyCastle's S_B with UNAUTHENTICATED \"S_B does not match\""
              + " and releases no K (got " + describe(st) + ")");
          return;
        }
        KeyExchangeResponse last = s.next();
        byte[] got = last.getSharedKey().toByteArray();
        if (mustFail) {  // another ID without confirmation: both sides go on with different keys
          check(got.length == c.klen() && !Arrays.equals(got, k),
              what + ": without confirmation the K differ (" + hex(got) + " vs " + hex(k) + ")");
        } else {
          check(got.length == c.klen() && Arrays.equals(got, k),
              what + ": smcryptd's K equals BouncyCastle responder's (" + hex(got) + " vs " + hex(k) + ")");
        }
        if (c.confirmation()) {
          check(Arrays.equals(last.getConfirmation().toByteArray(), expectedSa),
              what + ": smcryptd's S_A is the one BouncyCastle's responder expects");
        } else {
          check(last.getConfirmation().isEmpty(), what + ": no S_A without confirmation");
        }
      } else {
        // 1. params, R_A → R_B (+ K without confirmation, + S_B with it).
        s.send(KeyExchangeRequest.newBuilder().setParams(params)
            .setPeerEphemeralPoint(bs(point(bcRPub, false))).build());
        KeyExchangeResponse first = s.next();
        ECPublicKeyParameters rb = sm2PointOf(first.getEphemeralPoint(), what);
        SM2KeyExchange a = bcKex(true, bcD, bcR, peerId);
        CipherParameters b = bcKexPeer(serverP, rb, bcPeerId);
        if (!c.confirmation()) {
          byte[] k = a.calculateKey(kbits, b);
          byte[] got = first.getSharedKey().toByteArray();
          check(first.getConfirmation().isEmpty(), what + ": no S_B without confirmation");
          if (mustFail) {
            check(got.length == c.klen() && !Arrays.equals(got, k),
                what + ": without confirmation the K differ (" + hex(got) + " vs " + hex(k) + ")");
          } else {
            check(got.length == c.klen() && Arrays.equals(got, k),
                what + ": smcryptd's K equals BouncyCastle initiator's (" + hex(got) + " vs " + hex(k) + ")");
          }
        } else {
          byte[] sb = first.getConfirmation().toByteArray();
          check(first.getSharedKey().isEmpty() && sb.length == 32,
              what + ": with confirmation smcryptd answers R_B and a 32-byte S_B, no K yet");
          // BouncyCastle's initiator checks smcryptd's S_B itself; a flipped byte must fail there.
          boolean refused = false;
          try {
            bcKex(true, bcD, bcR, peerId).calculateKeyWithConfirmation(kbits, flipByte(sb), b);
          } catch (IllegalStateException e) {
            refused = true;
          }
          check(refused, what + ": BouncyCastle's initiator refuses a flipped byte of smcryptd's S_B");
          byte[][] r;
          try {
            r = a.calculateKeyWithConfirmation(kbits, sb, b);
          } catch (IllegalStateException e) {
            check(mustFail && !c.tamper(),
                what + ": BouncyCastle's initiator accepts smcryptd's S_B (" + e.getMessage() + ")");
            return;
          }
          check(!mustFail || c.tamper(), what + ": BouncyCastle's initiator accepted S_B computed for another ID");
          s.send(KeyExchangeRequest.newBuilder()
              .setPeerConfirmation(bs(c.tamper() ? flipByte(r[1]) : r[1])).build());
          if (c.tamper()) {
            Status st = s.end();
            check(st.getCode() == Status.Code.UNAUTHENTICATED && st.getDescription() != null
                && st.getDescription().contains("S_A does not match"),
                what + ": smcryptd refuses BouncyCastle's S_A with UNAUTHENTICATED \"S_A does not match\""
                + " and releases no K (got " + describe(st) + ")");
            return;
          }
          byte[] got = s.next().getSharedKey().toByteArray();
          check(got.length == c.klen() && Arrays.equals(got, r[0]),
              what + ": after S_A, smcryptd's K equals BouncyCastle initiator's (" + hex(got) + " vs "
              + hex(r[0]) + ")");
        }
      }
      Status st = s.finish();
      check(st.isOk(), what + ": the stream ends OK after K (got " + describe(st) + ")");
    }
  }

  /** kexCase, an exception (a failed call where none was due, a BC error) failing this case only. */
  static void kexCaseChecked(Kex c) {
    try {
      kexCase(c);
    } catch (Exception e) {
      check(false, c.name() + ": " + e);
    }
  }

  static void keyExchangeChecks() throws Exception {
    // Both roles × with / without confirmation × klen 16 and 48 bytes, custom binary user IDs
    // (1–64 random bytes, different for each side), the peer key inline as a raw point or SPKI.
    int i = 0;
    for (boolean serverInitiator : new boolean[] {true, false}) {
      for (boolean confirmation : new boolean[] {false, true}) {
        for (int klen : new int[] {16, 48}) {
          byte[] serverId = rand(randInt(1, 64)), peerId = rand(randInt(1, 64));
          kexCaseChecked(new Kex(serverInitiator, confirmation, klen, serverId, peerId, i++ % 2 == 1, serverId,
              false));
        }
      }
    }
    for (boolean serverInitiator : new boolean[] {true, false}) {
      // user_id / peer_user_id absent: smcryptd's default 1234567812345678 on both sides.
      kexCaseChecked(new Kex(serverInitiator, true, 16, null, null, false, null, false));
      // A flipped byte of the confirmation value smcryptd receives: UNAUTHENTICATED, no K.
      byte[] serverId = rand(randInt(1, 64)), peerId = rand(randInt(1, 64));
      kexCaseChecked(new Kex(serverInitiator, true, 16, serverId, peerId, true, serverId, true));
      // BouncyCastle given another ID for smcryptd's side: with confirmation the exchange
      // fails (smcryptd refuses S_B; BC refuses smcryptd's S_B); without it the K differ.
      byte[] otherId = concat(serverId, new byte[] {'x'});
      kexCaseChecked(new Kex(serverInitiator, true, 16, serverId, peerId, false, otherId, false));
      kexCaseChecked(new Kex(serverInitiator, false, 16, serverId, peerId, false, otherId, false));
    }
  }

  // ---- The keyring written by smcryptd_launch.sh: the same keys read by BouncyCastle --------

  static byte[] pemBody(Path file) throws Exception {
    StringBuilder b64 = new StringBuilder();
    for (String line : Files.readAllLines(file)) {
      if (!line.startsWith("-----")) b64.append(line.trim());
    }
    return Base64.getDecoder().decode(b64.toString());
  }

  static void keyringChecks() throws Exception {
    String dir = System.getenv("SMCRYPT_KEYS_DIR");
    if (dir == null) {
      check(false, "SMCRYPT_KEYS_DIR is not set");
      return;
    }
    Path keys = Path.of(dir);
    // hmac.pem (HMAC KEY): the same tag from key_id "hmac" and BouncyCastle with the file's bytes.
    byte[] hmacKey = pemBody(keys.resolve("hmac.pem")), data = rand(321);
    byte[] mac = rpc().hmac(HmacRequest.newBuilder().setAlgorithm(Algorithm.HMAC_SM3).setKey(keyId("hmac"))
        .setData(bs(data)).build()).getMac().toByteArray();
    check(Arrays.equals(mac, hmacSm3(hmacKey, data)), "keyring hmac: smcryptd's HMAC-SM3 equals BouncyCastle's");
    // sm4.pem (SM4 KEY): SM4-GCM with key_id "sm4", opened by BouncyCastle, and back.
    byte[] sm4Key = pemBody(keys.resolve("sm4.pem")), pt = rand(500), aad = rand(9);
    EncryptResponse sealed = rpc().encrypt(EncryptRequest.newBuilder().setAlgorithm(Algorithm.SM4_GCM)
        .setKey(keyId("sm4")).setPlaintext(bs(pt)).setAad(bs(aad)).build());
    check(Arrays.equals(sm4Gcm(false, sm4Key, sealed.getNonce().toByteArray(), aad, 16,
        concat(sealed.getCiphertext().toByteArray(), sealed.getTag().toByteArray())), pt),
        "keyring sm4: BouncyCastle opens smcryptd's SM4-GCM under the key file's bytes");
    byte[] nonce = rand(12), theirs = sm4Gcm(true, sm4Key, nonce, aad, 16, pt);
    check(Arrays.equals(rpc().decrypt(DecryptRequest.newBuilder().setAlgorithm(Algorithm.SM4_GCM)
        .setKey(keyId("sm4")).setNonce(bs(nonce)).setAad(bs(aad))
        .setCiphertext(ByteString.copyFrom(theirs, 0, pt.length))
        .setTag(ByteString.copyFrom(theirs, pt.length, 16)).build()).getPlaintext().toByteArray(), pt),
        "keyring sm4: smcryptd (key_id) opens BouncyCastle's SM4-GCM");
    // sm2.pem (PRIVATE KEY, from `openssl genpkey -algorithm SM2`): GetPublicKey and the file agree.
    ECPrivateKeyParameters sm2 = (ECPrivateKeyParameters) PrivateKeyFactory.createKey(
        pemBody(keys.resolve("sm2.pem")));
    ECPublicKeyParameters ring = (ECPublicKeyParameters) PublicKeyFactory.createKey(rpc().getPublicKey(
        GetPublicKeyRequest.newBuilder().setAlgorithm(Algorithm.SM2).setKey(keyId("sm2")).build())
        .getPublicKeyDer().toByteArray());
    check(ring.getParameters().getG().multiply(sm2.getD()).equals(ring.getQ()),
        "keyring sm2: GetPublicKey's SPKI point is d·G of OpenSSL's key file, as BouncyCastle reads it");
    byte[] msg = rand(100), uid = rand(20);
    check(bcVerify(ring, uid, msg, sign(keyId("sm2"), msg, options(uid, false)), false),
        "keyring sm2: BouncyCastle verifies smcryptd's signature (key_id, custom user ID)");
    check(verify(keyId("sm2"), msg, bcSign(sm2, uid, msg, false), options(uid, false)),
        "keyring sm2: smcryptd (key_id) verifies BouncyCastle's signature with the key file's d");
    check(Arrays.equals(sm2Decrypt(keyId("sm2"), bcSm2Encrypt(ring, SM2Engine.Mode.C1C3C2, pt),
        Sm2CiphertextFormat.SM2_CIPHERTEXT_FORMAT_UNSPECIFIED), pt),
        "keyring sm2: smcryptd (key_id) decrypts SM2Engine's ciphertext to GetPublicKey's key");
    // p256.pem (PRIVATE KEY, P-256): Java seals to GetPublicKey's key, smcryptd opens by key_id.
    ECPublicKeyParameters p256 = (ECPublicKeyParameters) PublicKeyFactory.createKey(rpc().getPublicKey(
        GetPublicKeyRequest.newBuilder().setAlgorithm(HPKE_P256).setKey(keyId("p256")).build())
        .getPublicKeyDer().toByteArray());
    byte[] info = rand(5);
    check(Arrays.equals(rpc().hybridDecrypt(HybridDecryptRequest.newBuilder().setAlgorithm(HPKE_P256)
        .setKey(keyId("p256")).setInfo(bs(info))
        .setCiphertext(bs(hpkeSeal(p256.getQ().getEncoded(false), pt, info))).build())
        .getPlaintext().toByteArray(), pt),
        "keyring p256: smcryptd (key_id) opens Java's HPKE seal to GetPublicKey's key");
    Rfc9180Hpke.KeyPair file = Rfc9180Hpke.keyPairOf(((ECPrivateKeyParameters) PrivateKeyFactory
        .createKey(pemBody(keys.resolve("p256.pem")))).getD());
    byte[] wire = rpc().hybridEncrypt(HybridEncryptRequest.newBuilder().setAlgorithm(HPKE_P256)
        .setKey(keyId("p256")).setPlaintext(bs(pt)).setInfo(bs(info)).build()).getCiphertext().toByteArray();
    check(Arrays.equals(hpkeOpen(file, wire, info), pt),
        "keyring p256: Java opens smcryptd's HPKE seal (key_id) with the key file's scalar");
  }

  // ---- Errors as status codes ---------------------------------------------------------------

  static void errorChecks() {
    // Every error smcryptd makes carries a google.rpc.ErrorInfo (domain smcrypt.v1), read with
    // StatusProto.fromThrowable; the checks above already required DECRYPTION_FAILED.
    byte[] key = rand(16), nonce = rand(12), pt = rand(50);
    EncryptResponse sealed = rpc().encrypt(EncryptRequest.newBuilder().setAlgorithm(Algorithm.SM4_GCM)
        .setKey(inline(key)).setNonce(bs(nonce)).setPlaintext(bs(pt)).build());
    Err tampered = failure(() -> rpc().decrypt(DecryptRequest.newBuilder()
        .setAlgorithm(Algorithm.SM4_GCM).setKey(inline(key)).setNonce(sealed.getNonce())
        .setCiphertext(sealed.getCiphertext()).setTag(bs(new byte[16])).build()));
    check(isDecryptionFailed(tampered) && tampered.info().getMetadataCount() == 0,
        "SM4-GCM with a zero tag: INVALID_ARGUMENT \"decryption failed\", reason DECRYPTION_FAILED, "
        + "no metadata (got " + describe(tampered) + ")");
    Err unknown = failure(() -> rpc().sign(SignRequest.newBuilder().setAlgorithm(Algorithm.SM2)
        .setKey(keyId("no-such-key")).setData(bs("x")).build()));
    check(unknown != null && unknown.code() == Status.Code.NOT_FOUND
        && "KEY_NOT_FOUND".equals(unknown.reason()) && "no-such-key".equals(unknown.meta("key_id")),
        "Sign with an unknown key_id: NOT_FOUND, reason KEY_NOT_FOUND, key_id no-such-key (got "
        + describe(unknown) + ")");
    Err family = failure(() -> rpc().sign(SignRequest.newBuilder().setAlgorithm(Algorithm.SM2)
        .setKey(keyId("sm4")).setData(bs("x")).build()));
    check(family != null && family.code() == Status.Code.FAILED_PRECONDITION
        && "WRONG_KEY_FAMILY".equals(family.reason()) && "sm4".equals(family.meta("key_id")),
        "Sign SM2 with the SM4 keyring key: FAILED_PRECONDITION, reason WRONG_KEY_FAMILY, key_id sm4 "
        + "(got " + describe(family) + ")");
    Err badKey = failure(() -> rpc().verify(VerifyRequest.newBuilder().setAlgorithm(Algorithm.SM2)
        .setKey(inline(concat(new byte[] {4}, new byte[64]))).setData(bs("x"))
        .setSignature(bs(new byte[64])).build()));
    check(badKey != null && badKey.code() == Status.Code.INVALID_ARGUMENT
        && "INVALID_KEY".equals(badKey.reason()),
        "Verify with a point off the curve: INVALID_ARGUMENT, reason INVALID_KEY (got "
        + describe(badKey) + ")");
    // A failed batch item: its smcrypt.v1.Status carries the same ErrorInfo in `details`.
    HybridEncryptBatchResponse batch = rpc().hybridEncryptBatch(HybridEncryptBatchRequest.newBuilder()
        .addItems(HybridEncryptRequest.newBuilder().setAlgorithm(HPKE_P256).setKey(keyId("no-such-key"))
            .setPlaintext(bs("x")))
        .build());
    ErrorInfo item = null;
    try {
      smcrypt.v1.Status st = batch.getResults(0).getStatus();
      if (st.getDetailsCount() == 1 && st.getDetails(0).is(ErrorInfo.class)) {
        item = st.getDetails(0).unpack(ErrorInfo.class);
      }
    } catch (InvalidProtocolBufferException | IndexOutOfBoundsException e) {
      item = null;
    }
    check(batch.getResults(0).getStatus().getCode() == Status.Code.NOT_FOUND.value() && item != null
        && item.getReason().equals("KEY_NOT_FOUND") && item.getDomain().equals("smcrypt.v1"),
        "HybridEncryptBatch item with an unknown key_id: Status NOT_FOUND with ErrorInfo KEY_NOT_FOUND "
        + "in details (got " + batch.getResultsList() + ")");
  }

  // ---- TLS and mTLS ------------------------------------------------------------------------

  static ManagedChannel tlsChannel(String target, File ca, File cert, File key, String authority)
      throws Exception {
    SslContextBuilder tls = GrpcSslContexts.forClient().trustManager(ca);
    if (cert != null) tls.keyManager(cert, key);
    NettyChannelBuilder b = NettyChannelBuilder.forTarget(target).sslContext(tls.build());
    if (authority != null) b.overrideAuthority(authority);
    return b.build();
  }

  static Status hashOver(ManagedChannel ch, String what) {
    try {
      byte[] d = CryptoServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
          .hash(HashRequest.newBuilder().setAlgorithm(Algorithm.SM3).setData(bs("abc")).build())
          .getDigest().toByteArray();
      check(Arrays.equals(d, sm3("abc".getBytes(StandardCharsets.US_ASCII))), what + ": SM3(abc)");
      return Status.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus();
    } finally {
      ch.shutdownNow();
    }
  }

  static void tlsChecks() throws Exception {
    String tlsTarget = System.getenv("SMCRYPT_TLS_TARGET"), mtlsTarget = System.getenv("SMCRYPT_MTLS_TARGET");
    String dir = System.getenv("SMCRYPT_TLS_DIR");
    if (tlsTarget == null || mtlsTarget == null || dir == null) {
      check(false, "SMCRYPT_TLS_TARGET, SMCRYPT_MTLS_TARGET and SMCRYPT_TLS_DIR must be set");
      return;
    }
    // grpc-java needs ALPN (h2). Debian 12's Netty 4.1.48 offers it only through OpenSSL
    // (netty-tcnative); its JDK provider refuses ALPN. run_java_client.sh sets that up.
    check(OpenSsl.isAvailable(), "netty-tcnative (OpenSSL) is available for TLS with ALPN: "
        + (OpenSsl.isAvailable() ? OpenSsl.versionString() : String.valueOf(OpenSsl.unavailabilityCause())));
    File ca = new File(dir, "ca.pem"), otherCa = new File(dir, "other-ca.pem");
    File cert = new File(dir, "client.pem"), key = new File(dir, "client.key");

    // TLS: several RPCs on one channel, checked by BouncyCastle.
    ManagedChannel ch = tlsChannel(tlsTarget, ca, null, null, null);
    try {
      CryptoServiceGrpc.CryptoServiceBlockingStub s =
          CryptoServiceGrpc.newBlockingStub(ch).withDeadlineAfter(20, TimeUnit.SECONDS);
      byte[] data = rand(4096);
      check(Arrays.equals(s.hash(HashRequest.newBuilder().setAlgorithm(Algorithm.SM3).setData(bs(data))
          .build()).getDigest().toByteArray(), sm3(data)), "TLS: SM3 equals BouncyCastle's");
      AsymmetricCipherKeyPair kp = sm2KeyPair();
      byte[] sig = s.sign(SignRequest.newBuilder().setAlgorithm(Algorithm.SM2)
          .setKey(inline(scalar((ECPrivateKeyParameters) kp.getPrivate()))).setData(bs(data)).build())
          .getSignature().toByteArray();
      check(bcVerify((ECPublicKeyParameters) kp.getPublic(), null, data, sig, false),
          "TLS: BouncyCastle verifies smcryptd's SM2 signature");
      check(s.getServerInfo(GetServerInfoRequest.getDefaultInstance()).getSelfTestsPassed(),
          "TLS: GetServerInfo");
    } finally {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    Status wrongCa = hashOver(tlsChannel(tlsTarget, otherCa, null, null, null), "TLS, another CA");
    check(wrongCa.getCode() == Status.Code.UNAVAILABLE,
        "TLS: a CA that did not sign the server's certificate is refused (got " + describe(wrongCa) + ")");
    Status wrongName = hashOver(tlsChannel(tlsTarget, ca, null, null, "not-the-server.example"),
        "TLS, another host name");
    check(wrongName.getCode() == Status.Code.UNAVAILABLE,
        "TLS: a host name the certificate does not name is refused (got " + describe(wrongName) + ")");
    Status plain = hashOver(NettyChannelBuilder.forTarget(tlsTarget).usePlaintext().build(),
        "plaintext to TLS");
    check(!plain.isOk(), "TLS: a plaintext client gets no answer (got " + describe(plain) + ")");

    // mTLS: a client certificate from the CA is accepted; none is refused.
    Status withCert = hashOver(tlsChannel(mtlsTarget, ca, cert, key, null), "mTLS with a client certificate");
    check(withCert.isOk(), "mTLS: a call with the client certificate (got " + describe(withCert) + ")");
    Status noCert = hashOver(tlsChannel(mtlsTarget, ca, null, null, null), "mTLS without a certificate");
    check(noCert.getCode() == Status.Code.UNAVAILABLE,
        "mTLS: a client without a certificate is refused (got " + describe(noCert) + ")");
  }
}
