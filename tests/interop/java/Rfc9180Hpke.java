// Rfc9180Hpke.java — HPKE base mode (RFC 9180) for the suite DHKEM(P-256, HKDF-SHA256) 0x0010,
// HKDF-SHA256 0x0001, AES-128-GCM 0x0001, written for the Java interop test from BouncyCastle
// 1.72's primitives: EC arithmetic and ECDH on secp256r1 (ECDHBasicAgreement), HMAC-SHA256 and
// HKDF-Expand (HKDFBytesGenerator), AES-GCM (GCMBlockCipher over AESEngine).
//
// Why not BouncyCastle's own HPKE: org.bouncycastle.crypto.hpke first shipped in BouncyCastle
// 1.73; Debian 12's libbcprov-java is 1.72 and has no HPKE class. This file follows RFC 9180
// §4 (LabeledExtract/LabeledExpand), §4.1 (DHKEM ExtractAndExpand), §5.1 (KeySchedule),
// §5.2 (nonce = base_nonce XOR I2OSP(seq, 12)), §5.3 (Export) and §7.1.3 (DeriveKeyPair, P-256
// bitmask 0xff), and is checked against RFC 9180 Appendix A.3.1 (every intermediate value,
// every encryption and export) before it is used against smcryptd. It shares no code with
// smcrypt (whose HPKE is C++ over OpenSSL).
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.InvalidCipherTextException;
import org.bouncycastle.crypto.agreement.ECDHBasicAgreement;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.ec.CustomNamedCurves;
import org.bouncycastle.crypto.engines.AESEngine;
import org.bouncycastle.crypto.generators.HKDFBytesGenerator;
import org.bouncycastle.crypto.macs.HMac;
import org.bouncycastle.crypto.modes.GCMBlockCipher;
import org.bouncycastle.crypto.params.AEADParameters;
import org.bouncycastle.crypto.params.ECDomainParameters;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.crypto.params.HKDFParameters;
import org.bouncycastle.crypto.params.KeyParameter;
import org.bouncycastle.math.ec.ECPoint;
import org.bouncycastle.util.BigIntegers;

final class Rfc9180Hpke {
  static final int KEM_ID = 0x0010, KDF_ID = 0x0001, AEAD_ID = 0x0001;
  static final int N_SECRET = 32, N_K = 16, N_N = 12, N_H = 32, N_T = 16;
  static final X9ECParameters P256 = CustomNamedCurves.getByName("P-256");
  static final ECDomainParameters DOMAIN =
      new ECDomainParameters(P256.getCurve(), P256.getG(), P256.getN(), P256.getH());
  private static final byte[] KEM_SUITE = concat(ascii("KEM"), i2osp(KEM_ID, 2));
  private static final byte[] HPKE_SUITE =
      concat(ascii("HPKE"), i2osp(KEM_ID, 2), i2osp(KDF_ID, 2), i2osp(AEAD_ID, 2));

  /** A key pair: the scalar and the serialized (uncompressed, 65-byte) public key. */
  record KeyPair(BigInteger sk, byte[] pkBytes) {
    ECPrivateKeyParameters privateKey() { return new ECPrivateKeyParameters(sk, DOMAIN); }
    byte[] skBytes() { return BigIntegers.asUnsignedByteArray(32, sk); }
  }

  /** The sender's result of SetupBaseS: enc and a context to seal with. */
  record Sender(byte[] enc, Context context) {}

  /** An encryption context (RFC 9180 §5.2): key, base_nonce, sequence number, exporter secret. */
  static final class Context {
    final byte[] sharedSecret, keyScheduleContext, secret, key, baseNonce, exporterSecret;
    private long seq;

    private Context(byte[] sharedSecret, byte[] info) {
      this.sharedSecret = sharedSecret;
      byte[] pskIdHash = labeledExtract(HPKE_SUITE, new byte[0], "psk_id_hash", new byte[0]);
      byte[] infoHash = labeledExtract(HPKE_SUITE, new byte[0], "info_hash", info);
      keyScheduleContext = concat(new byte[] {0x00}, pskIdHash, infoHash);  // mode_base
      secret = labeledExtract(HPKE_SUITE, sharedSecret, "secret", new byte[0]);  // psk = ""
      key = labeledExpand(HPKE_SUITE, secret, "key", keyScheduleContext, N_K);
      baseNonce = labeledExpand(HPKE_SUITE, secret, "base_nonce", keyScheduleContext, N_N);
      exporterSecret = labeledExpand(HPKE_SUITE, secret, "exp", keyScheduleContext, N_H);
    }

    byte[] nonce(long s) {
      byte[] n = baseNonce.clone();
      byte[] seqBytes = i2osp(s, N_N);
      for (int i = 0; i < N_N; i++) n[i] ^= seqBytes[i];
      return n;
    }

    long sequence() { return seq; }

    /** Jumps to sequence number s (for the RFC's vectors, which skip some). */
    void setSequence(long s) { seq = s; }

    byte[] seal(byte[] aad, byte[] pt) { return aead(true, nonce(seq++), aad, pt); }

    /** Opens ct ‖ tag; null when the tag does not verify (the sequence number then stays). */
    byte[] open(byte[] aad, byte[] ct) {
      byte[] pt = aead(false, nonce(seq), aad, ct);
      if (pt != null) seq++;
      return pt;
    }

    byte[] export(byte[] exporterContext, int length) {
      return labeledExpand(HPKE_SUITE, exporterSecret, "sec", exporterContext, length);
    }

    private byte[] aead(boolean encrypt, byte[] nonce, byte[] aad, byte[] in) {
      GCMBlockCipher gcm = new GCMBlockCipher(new AESEngine());
      gcm.init(encrypt, new AEADParameters(new KeyParameter(key), N_T * 8, nonce, aad));
      byte[] out = new byte[gcm.getOutputSize(in.length)];
      int n = gcm.processBytes(in, 0, in.length, out, 0);
      try {
        n += gcm.doFinal(out, n);
      } catch (InvalidCipherTextException e) {
        return null;
      }
      return Arrays.copyOf(out, n);
    }
  }

  // ---- DHKEM(P-256, HKDF-SHA256), RFC 9180 §4.1 and §7.1 --------------------------------------

  static KeyPair generateKeyPair(SecureRandom random) {
    byte[] ikm = new byte[32];
    random.nextBytes(ikm);
    return deriveKeyPair(ikm);
  }

  /** DeriveKeyPair (§7.1.3): rejection sampling of candidates, bitmask 0xff for P-256. */
  static KeyPair deriveKeyPair(byte[] ikm) {
    byte[] dkpPrk = labeledExtract(KEM_SUITE, new byte[0], "dkp_prk", ikm);
    for (int counter = 0; counter < 256; counter++) {
      byte[] bytes = labeledExpand(KEM_SUITE, dkpPrk, "candidate", i2osp(counter, 1), 32);
      bytes[0] &= (byte) 0xff;
      BigInteger sk = new BigInteger(1, bytes);
      if (sk.signum() != 0 && sk.compareTo(DOMAIN.getN()) < 0) return keyPairOf(sk);
    }
    throw new IllegalStateException("DeriveKeyPairError");
  }

  static KeyPair keyPairOf(BigInteger sk) {
    return new KeyPair(sk, DOMAIN.getG().multiply(sk).normalize().getEncoded(false));
  }

  /** Decodes a serialized public key; throws IllegalArgumentException off the curve. */
  static ECPublicKeyParameters publicKey(byte[] pkBytes) {
    ECPoint q = DOMAIN.getCurve().decodePoint(pkBytes);  // validates the point
    return new ECPublicKeyParameters(q, DOMAIN);
  }

  private static byte[] dh(ECPrivateKeyParameters sk, ECPublicKeyParameters pk) {
    ECDHBasicAgreement agreement = new ECDHBasicAgreement();
    agreement.init(sk);
    return BigIntegers.asUnsignedByteArray(32, agreement.calculateAgreement(pk));
  }

  private static byte[] extractAndExpand(byte[] dh, byte[] kemContext) {
    byte[] eaePrk = labeledExtract(KEM_SUITE, new byte[0], "eae_prk", dh);
    return labeledExpand(KEM_SUITE, eaePrk, "shared_secret", kemContext, N_SECRET);
  }

  /** SetupBaseS with the given ephemeral key pair (the RFC's vectors fix it; else random). */
  static Sender setupBaseS(byte[] pkRBytes, byte[] info, KeyPair ephemeral) {
    byte[] dh = dh(ephemeral.privateKey(), publicKey(pkRBytes));
    byte[] enc = ephemeral.pkBytes();
    byte[] sharedSecret = extractAndExpand(dh, concat(enc, pkRBytes));
    return new Sender(enc, new Context(sharedSecret, info));
  }

  static Sender setupBaseS(byte[] pkRBytes, byte[] info, SecureRandom random) {
    return setupBaseS(pkRBytes, info, generateKeyPair(random));
  }

  /** SetupBaseR; throws IllegalArgumentException for an enc that is not a P-256 point. */
  static Context setupBaseR(byte[] enc, KeyPair recipient, byte[] info) {
    byte[] dh = dh(recipient.privateKey(), publicKey(enc));
    byte[] sharedSecret = extractAndExpand(dh, concat(enc, recipient.pkBytes()));
    return new Context(sharedSecret, info);
  }

  // ---- HKDF-SHA256 with labels, RFC 9180 §4 --------------------------------------------------

  static byte[] labeledExtract(byte[] suite, byte[] salt, String label, byte[] ikm) {
    byte[] labeledIkm = concat(ascii("HPKE-v1"), suite, ascii(label), ikm);
    HMac hmac = new HMac(new SHA256Digest());
    hmac.init(new KeyParameter(salt.length == 0 ? new byte[N_H] : salt));  // RFC 5869 §2.2
    hmac.update(labeledIkm, 0, labeledIkm.length);
    byte[] prk = new byte[N_H];
    hmac.doFinal(prk, 0);
    return prk;
  }

  static byte[] labeledExpand(byte[] suite, byte[] prk, String label, byte[] info, int length) {
    byte[] labeledInfo = concat(i2osp(length, 2), ascii("HPKE-v1"), suite, ascii(label), info);
    HKDFBytesGenerator hkdf = new HKDFBytesGenerator(new SHA256Digest());
    hkdf.init(HKDFParameters.skipExtractParameters(prk, labeledInfo));
    byte[] out = new byte[length];
    hkdf.generateBytes(out, 0, length);
    return out;
  }

  // ---- Bytes -----------------------------------------------------------------------------------

  static byte[] i2osp(long value, int length) {
    byte[] out = new byte[length];
    for (int i = length - 1; i >= 0 && value != 0; i--, value >>>= 8) out[i] = (byte) value;
    return out;
  }

  static byte[] ascii(String s) { return s.getBytes(StandardCharsets.US_ASCII); }

  static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) n += p.length;
    byte[] out = new byte[n];
    int off = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, off, p.length);
      off += p.length;
    }
    return out;
  }

  private Rfc9180Hpke() {}
}
