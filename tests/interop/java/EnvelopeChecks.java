// EnvelopeChecks.java — the key management RPCs of a real smcryptd (crypto.proto, "Key
// management"): Rewrap, RewrapBatch, GenerateDataKey and GenerateDataKeyWithoutPlaintext,
// checked by BouncyCastle through InteropTest's helpers, and ListKeys (run as two of its
// sections, against smcryptd_launch.sh's keyring: dek.v1.pem / dek.v2.pem two versions of an
// SM4 key, sm2.pem an SM2 private key):
//   Rewrap       BouncyCastle seals under dek version 1; smcryptd's result opens under the
//                bytes of dek.v2.pem with GCMBlockCipher(SM4Engine), not under version 1
//   RewrapBatch  a tampered item is that item's DECRYPTION_FAILED, the others open under v2
//   data keys    SM4-GCM under dek (BouncyCastle opens it under v2: the plaintext key), SM2 to
//                sm2 (SM2Engine with the key file's d opens it), without the plaintext
//   ListKeys     paged by 2 to the end: the launch keyring's key ids in order, families,
//                versions (dek: 1 and 2, primary 2), load times; SM2 / EC fingerprints equal
//                SHA-256 (java.security) of GetPublicKey's SPKI (named by key_id and version,
//                no algorithm), symmetric keys none; a bad page_token INVALID_ARGUMENT with
//                ErrorInfo field page_token
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.bouncycastle.crypto.engines.SM2Engine;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.util.PrivateKeyFactory;
import smcrypt.v1.Algorithm;
import smcrypt.v1.DataKeySpec;
import smcrypt.v1.GenerateDataKeyRequest;
import smcrypt.v1.GenerateDataKeyResponse;
import smcrypt.v1.GenerateDataKeyWithoutPlaintextRequest;
import smcrypt.v1.GenerateDataKeyWithoutPlaintextResponse;
import smcrypt.v1.GetPublicKeyRequest;
import smcrypt.v1.KeyInfo;
import smcrypt.v1.KeyRef;
import smcrypt.v1.KeyVersionInfo;
import smcrypt.v1.ListKeysRequest;
import smcrypt.v1.ListKeysResponse;
import smcrypt.v1.RewrapBatchRequest;
import smcrypt.v1.RewrapBatchResponse;
import smcrypt.v1.RewrapBatchResult;
import smcrypt.v1.RewrapRequest;
import smcrypt.v1.RewrapResponse;

final class EnvelopeChecks {
  private EnvelopeChecks() {}

  static KeyRef dek(int version) {
    return KeyRef.newBuilder().setKeyId("dek").setKeyVersion(version).build();
  }

  /** BouncyCastle's SM4-GCM open of ciphertext ‖ tag, or null when the tag does not verify. */
  static byte[] open(byte[] key, ByteString nonce, byte[] aad, ByteString ct, ByteString tag) {
    try {
      return InteropTest.sm4Gcm(false, key, nonce.toByteArray(), aad, tag.size(),
          InteropTest.concat(ct.toByteArray(), tag.toByteArray()));
    } catch (Exception e) {
      return null;
    }
  }

  static void run() throws Exception {
    Path keys = Path.of(System.getenv("SMCRYPT_KEYS_DIR"));
    byte[] v1 = InteropTest.pemBody(keys.resolve("dek.v1.pem"));
    byte[] v2 = InteropTest.pemBody(keys.resolve("dek.v2.pem"));
    byte[] nonce = InteropTest.rand(12), aad = InteropTest.rand(9), pt = InteropTest.rand(300);
    byte[] sealed = InteropTest.sm4Gcm(true, v1, nonce, aad, 16, pt);
    RewrapRequest.Builder req = RewrapRequest.newBuilder().setAlgorithm(Algorithm.SM4_GCM)
        .setKey(dek(1)).setNonce(InteropTest.bs(nonce)).setAad(InteropTest.bs(aad))
        .setCiphertext(ByteString.copyFrom(sealed, 0, pt.length))
        .setTag(ByteString.copyFrom(sealed, pt.length, 16));
    RewrapResponse r = InteropTest.rpc().rewrap(req.build());
    InteropTest.check(r.getSourceKeyVersion() == 1 && r.getKeyVersion() == 2,
        "Rewrap dek v1: source_key_version 1, key_version 2 (got " + r.getSourceKeyVersion() + ", "
        + r.getKeyVersion() + ")");
    InteropTest.check(Arrays.equals(open(v2, r.getNonce(), aad, r.getCiphertext(), r.getTag()), pt),
        "Rewrap: BouncyCastle opens the result under dek.v2.pem's bytes");
    InteropTest.check(open(v1, r.getNonce(), aad, r.getCiphertext(), r.getTag()) == null,
        "Rewrap: the result does not open under dek version 1");

    byte[] badTag = Arrays.copyOfRange(sealed, pt.length, pt.length + 16);
    badTag[5] ^= 0x10;
    RewrapBatchResponse batch = InteropTest.rpc().rewrapBatch(RewrapBatchRequest.newBuilder()
        .addItems(req.build()).addItems(req.clone().setTag(InteropTest.bs(badTag)).build())
        .addItems(req.build()).build());
    InteropTest.check(batch.getResultsCount() == 3, "RewrapBatch: one result per item");
    String reason = null;
    try {
      smcrypt.v1.Status st = batch.getResults(1).getStatus();
      if (st.getDetailsCount() == 1 && st.getDetails(0).is(ErrorInfo.class)) {
        reason = st.getDetails(0).unpack(ErrorInfo.class).getReason();
      }
    } catch (InvalidProtocolBufferException e) {
      reason = null;
    }
    InteropTest.check(batch.getResults(1).getStatus().getCode() == 3
        && "DECRYPTION_FAILED".equals(reason) && batch.getResults(1).getCiphertext().isEmpty(),
        "RewrapBatch: the tampered item is INVALID_ARGUMENT, reason DECRYPTION_FAILED, no output");
    for (int i : new int[] {0, 2}) {
      RewrapBatchResult res = batch.getResults(i);
      InteropTest.check(res.getStatus().getCode() == 0 && res.getKeyVersion() == 2
          && Arrays.equals(open(v2, res.getNonce(), aad, res.getCiphertext(), res.getTag()), pt),
          "RewrapBatch item " + i + ": OK, opens under dek v2");
    }

    GenerateDataKeyRequest.Builder dk = GenerateDataKeyRequest.newBuilder()
        .setKeySpec(DataKeySpec.DATA_KEY_SPEC_SM4_128).setAlgorithm(Algorithm.SM4_GCM)
        .setKey(KeyRef.newBuilder().setKeyId("dek")).setAad(InteropTest.bs("tenant=7"));
    GenerateDataKeyResponse key = InteropTest.rpc().generateDataKey(dk.build());
    InteropTest.check(key.getPlaintextKey().size() == 16 && key.getKeyVersion() == 2
        && Arrays.equals(open(v2, key.getNonce(), "tenant=7".getBytes(), key.getCiphertext(),
            key.getTag()), key.getPlaintextKey().toByteArray()),
        "GenerateDataKey SM4-GCM under dek: BouncyCastle unwraps the plaintext key under v2");
    GenerateDataKeyWithoutPlaintextResponse only = InteropTest.rpc().generateDataKeyWithoutPlaintext(
        GenerateDataKeyWithoutPlaintextRequest.parseFrom(dk.build().toByteArray()));
    byte[] unwrapped = open(v2, only.getNonce(), "tenant=7".getBytes(), only.getCiphertext(),
        only.getTag());
    InteropTest.check(unwrapped != null && unwrapped.length == 16,
        "GenerateDataKeyWithoutPlaintext: no plaintext key, a 16-byte key wrapped");

    ECPrivateKeyParameters sm2 = (ECPrivateKeyParameters) PrivateKeyFactory.createKey(
        InteropTest.pemBody(keys.resolve("sm2.pem")));
    GenerateDataKeyResponse wrapped = InteropTest.rpc().generateDataKey(GenerateDataKeyRequest
        .newBuilder().setKeySpec(DataKeySpec.DATA_KEY_SPEC_AES_256).setAlgorithm(Algorithm.SM2)
        .setKey(KeyRef.newBuilder().setKeyId("sm2")).build());
    InteropTest.check(wrapped.getPlaintextKey().size() == 32 && Arrays.equals(
        InteropTest.bcSm2Decrypt(sm2, SM2Engine.Mode.C1C3C2, wrapped.getCiphertext().toByteArray()),
        wrapped.getPlaintextKey().toByteArray()),
        "GenerateDataKey SM2 to sm2: SM2Engine with the key file's d unwraps the plaintext key");
  }

  /** smcryptd_launch.sh's keyring: key_id to key_family. */
  static final Map<String, String> LAUNCH_KEYS = Map.of("aes256", "AES-256", "dek", "SM4",
      "hmac", "HMAC", "p256", "EC P-256", "sm2", "SM2", "sm4", "SM4", "sm4xts", "SM4-XTS");

  static void listKeys() throws Exception {
    List<KeyInfo> keys = new ArrayList<>();
    String token = "";
    do {
      ListKeysResponse page = InteropTest.rpc().listKeys(
          ListKeysRequest.newBuilder().setPageSize(2).setPageToken(token).build());
      InteropTest.check(page.getKeysCount() <= 2 && page.getKeyringLoadTimeUnixMicros() > 0,
          "ListKeys page_size 2: at most 2 keys, keyring_load_time_unix_micros > 0");
      keys.addAll(page.getKeysList());
      token = page.getNextPageToken();
    } while (!token.isEmpty() && keys.size() <= LAUNCH_KEYS.size());
    List<String> ids = keys.stream().map(KeyInfo::getKeyId).toList();
    InteropTest.check(token.isEmpty() && ids.equals(LAUNCH_KEYS.keySet().stream().sorted().toList()),
        "ListKeys: smcryptd_launch.sh's key ids in key_id order, then no next_page_token (got "
        + ids + ")");
    for (KeyInfo k : keys) {
      String family = LAUNCH_KEYS.get(k.getKeyId());
      boolean asymmetric = "SM2".equals(family) || "EC P-256".equals(family);
      int newest = k.getKeyId().equals("dek") ? 2 : 1;
      InteropTest.check(k.getKeyFamily().equals(family) && k.getAlgorithmsCount() > 0
          && k.getVersionsCount() == newest && k.getPrimaryVersion() == newest
          && k.getMinVersion() == 1,
          "ListKeys " + k.getKeyId() + ": family " + family + ", algorithms, versions 1.." + newest
          + ", primary " + newest + ", min_version 1 (got " + k + ")");
      for (int i = 0; i < k.getVersionsCount(); i++) {
        KeyVersionInfo v = k.getVersions(i);
        byte[] want = new byte[0];
        if (asymmetric) {
          want = MessageDigest.getInstance("SHA-256").digest(InteropTest.rpc().getPublicKey(
              GetPublicKeyRequest.newBuilder().setKey(KeyRef.newBuilder().setKeyId(k.getKeyId())
                  .setKeyVersion(v.getVersion())).build()).getPublicKeyDer().toByteArray());
        }
        InteropTest.check(v.getVersion() == i + 1 && v.getLoadTimeUnixMicros() > 0 && !v.getRetired()
            && v.getHasPrivateKey() == asymmetric
            && Arrays.equals(v.getPublicKeySha256().toByteArray(), want),
            "ListKeys " + k.getKeyId() + " v" + (i + 1) + ": load time, "
            + (asymmetric ? "public_key_sha256 = SHA-256 of GetPublicKey's SPKI (no algorithm)"
                : "no fingerprint") + " (got " + v + ")");
      }
    }
    InteropTest.Err bad = InteropTest.failure(() -> InteropTest.rpc().listKeys(
        ListKeysRequest.newBuilder().setPageSize(2).setPageToken("not-a-token").build()));
    InteropTest.check(bad != null && bad.code() == Status.Code.INVALID_ARGUMENT
        && "INVALID_ARGUMENT".equals(bad.reason()) && "page_token".equals(bad.meta("field")),
        "ListKeys with a page_token it did not make: INVALID_ARGUMENT, reason INVALID_ARGUMENT, "
        + "field page_token (got " + InteropTest.describe(bad) + ")");
  }
}
