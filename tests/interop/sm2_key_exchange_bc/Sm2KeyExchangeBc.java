// Sm2KeyExchangeBc — BouncyCastle 1.72's side of the SM2 key exchange differential test
// (GB/T 32918.3-2016 §6; run_sm2_key_exchange_bc.sh).
//
// Reads the lines of `sm2_key_exchange_bc_tool gen` on stdin:
//   dA dB rA rB idA idB klen  RA RB K S_B S_A      (hex, "-" for an empty ID; klen in bytes)
// and, for each, runs org.bouncycastle.crypto.agreement.SM2KeyExchange with the same
// long-term keys, ephemeral keys and IDs (ParametersWithID around
// SM2KeyExchangePrivateParameters / SM2KeyExchangePublicParameters), klen·8 bits:
//   - BC's responder, calculateKeyWithConfirmation(klen, null, A's public values), which
//     returns { K, S_B, expected S_A } (BC's own names: S1 = SM3(0x02 ‖ y ‖ H) and
//     S2 = SM3(0x03 ‖ y ‖ H));
//   - BC's initiator given smcrypt's S_B, calculateKeyWithConfirmation(klen, S_B, B's
//     public values), which checks S_B itself (IllegalStateException on a mismatch) and
//     returns { K, S_A }: BC A against smcrypt B;
//   - both without confirmation, calculateKey.
// BC's K, S_B and S_A must equal smcrypt's (its expected S_A is how a BC responder checks
// smcrypt A's S_A). Writes each input line with BC's  RA RB K S_B S_A  appended, for
// `sm2_key_exchange_bc_tool check`, which runs smcrypt against BC's messages. A mismatch
// or exception is printed to stderr and makes the exit status 1.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.bouncycastle.asn1.gm.GMNamedCurves;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.CipherParameters;
import org.bouncycastle.crypto.agreement.SM2KeyExchange;
import org.bouncycastle.crypto.params.ECDomainParameters;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.crypto.params.ParametersWithID;
import org.bouncycastle.crypto.params.SM2KeyExchangePrivateParameters;
import org.bouncycastle.crypto.params.SM2KeyExchangePublicParameters;
import org.bouncycastle.util.encoders.Hex;

public final class Sm2KeyExchangeBc {
  private static final X9ECParameters X9 = GMNamedCurves.getByName("sm2p256v1");
  private static final ECDomainParameters DOMAIN = new ECDomainParameters(X9);

  private static byte[] unhex(String s) {
    return s.equals("-") ? new byte[0] : Hex.decode(s);
  }

  private static String hex(byte[] b) {
    return b.length == 0 ? "-" : Hex.toHexString(b);
  }

  private static ECPrivateKeyParameters priv(byte[] d) {
    return new ECPrivateKeyParameters(new BigInteger(1, d), DOMAIN);
  }

  private static ECPublicKeyParameters pub(ECPrivateKeyParameters k) {
    return new ECPublicKeyParameters(DOMAIN.getG().multiply(k.getD()).normalize(), DOMAIN);
  }

  private static SM2KeyExchange party(boolean initiator, ECPrivateKeyParameters stat,
      ECPrivateKeyParameters eph, byte[] id) {
    SM2KeyExchange kx = new SM2KeyExchange();
    kx.init(new ParametersWithID(new SM2KeyExchangePrivateParameters(initiator, stat, eph), id));
    return kx;
  }

  private static CipherParameters peer(ECPrivateKeyParameters stat, ECPrivateKeyParameters eph,
      byte[] id) {
    return new ParametersWithID(new SM2KeyExchangePublicParameters(pub(stat), pub(eph)), id);
  }

  private static int failures = 0;  // cases with a mismatch or an exception
  private static boolean caseOk;

  private static void expect(int n, String what, byte[] bc, byte[] smcrypt) {
    if (!Arrays.equals(bc, smcrypt)) {
      System.err.println("case " + n + ": " + what + ": BouncyCastle " + hex(bc) + ", smcrypt "
          + hex(smcrypt));
      caseOk = false;
    }
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
    PrintStream out = new PrintStream(System.out, false, "US-ASCII");
    String line;
    int n = 0;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      String[] f = line.trim().split(" +");
      if (f.length != 12) {
        System.err.println("case " + n + ": expected 12 fields, got " + f.length);
        failures++;
        n++;
        continue;
      }
      caseOk = true;
      try {
        ECPrivateKeyParameters dA = priv(unhex(f[0])), dB = priv(unhex(f[1]));
        ECPrivateKeyParameters rA = priv(unhex(f[2])), rB = priv(unhex(f[3]));
        byte[] idA = unhex(f[4]), idB = unhex(f[5]);
        int kbits = Integer.parseInt(f[6]) * 8;
        byte[] smRA = unhex(f[7]), smRB = unhex(f[8]), smK = unhex(f[9]);
        byte[] smSB = unhex(f[10]), smSA = unhex(f[11]);

        byte[] bcRA = pub(rA).getQ().getEncoded(false), bcRB = pub(rB).getQ().getEncoded(false);
        expect(n, "R_A", bcRA, smRA);
        expect(n, "R_B", bcRB, smRB);

        // BC B: { K, S_B, expected S_A }. BC checks smcrypt A's S_A by this comparison.
        byte[][] b = party(false, dB, rB, idB).calculateKeyWithConfirmation(kbits, null,
            peer(dA, rA, idA));
        expect(n, "responder K", b[0], smK);
        expect(n, "S_B", b[1], smSB);
        expect(n, "expected S_A", b[2], smSA);
        // BC A given smcrypt B's S_B: BC verifies it (throws on a mismatch) and returns S_A.
        byte[][] a = party(true, dA, rA, idA).calculateKeyWithConfirmation(kbits, smSB,
            peer(dB, rB, idB));
        expect(n, "initiator K", a[0], smK);
        expect(n, "S_A", a[1], smSA);
        // Without confirmation.
        expect(n, "initiator K (no confirmation)",
            party(true, dA, rA, idA).calculateKey(kbits, peer(dB, rB, idB)), smK);
        expect(n, "responder K (no confirmation)",
            party(false, dB, rB, idB).calculateKey(kbits, peer(dA, rA, idA)), smK);

        out.println(line.trim() + " " + hex(bcRA) + " " + hex(bcRB) + " " + hex(b[0]) + " "
            + hex(b[1]) + " " + hex(a[1]));
      } catch (RuntimeException e) {
        System.err.println("case " + n + ": BouncyCastle: " + e);
        caseOk = false;
      }
      if (!caseOk) failures++;
      n++;
    }
    out.flush();
    String bc = new org.bouncycastle.jce.provider.BouncyCastleProvider().getInfo();
    System.err.println(bc + ": " + (n - failures) + " of " + n
        + " cases agree with smcrypt");
    System.exit(failures == 0 && n > 0 ? 0 : 1);
  }
}
