// hpke.h — Hybrid Public Key Encryption, base mode (RFC 9180), with two cipher suites,
// and the hybrid-encryption wire format of smcrypt (docs/hpke.md "One-shot wire format").
//
// Suites (RFC 9180 §7 names; N* sizes in bytes):
//
//   HPKE-P256-SHA256-AES128GCM   KEM 0x0010 DHKEM(P-256, HKDF-SHA256)   (RFC 9180 §7.1)
//                                KDF 0x0001 HKDF-SHA256                 (§7.2)
//                                AEAD 0x0001 AES-128-GCM                (§7.3)
//     Nsecret 32, Nenc 65, Npk 65, Nsk 32; Nh 32; Nk 16, Nn 12, Nt 16. IANA-registered;
//     checked against RFC 9180 Appendix A.3.1. P-256, HKDF and AES run on OpenSSL 3 EVP.
//
//   HPKE-SM2-SM3-SM4GCM          KEM 0xFF10 DHKEM(SM2, HKDF-SM3)
//                                KDF 0xFF01 HKDF-SM3
//                                AEAD 0xFF01 SM4-GCM
//     Nsecret 32, Nenc 65, Npk 65, Nsk 32; Nh 32; Nk 16, Nn 12, Nt 16. On smcrypt's own
//     SM2 (curve sm2p256v1, GB/T 32918.5), SM3 (GB/T 32905) and SM4 (GB/T 32907).
//
//     These ids are not IANA-registered (RFC 9180 §11 registries are "Specification
//     Required" with no private-use range): the high byte 0xFF marks them local, the low
//     byte mirrors the registered analogue; they are unassigned, interoperate only with
//     peers that adopt them, and would change if an assignment is made.
//
//     The SM suite instantiates RFC 9180 unchanged: DHKEM (§4.1) with DH(sk, pk) = the
//     x-coordinate of sk·pk (32 bytes, SEC 1 §3.3.1 on sm2p256v1, cofactor 1);
//     SerializePublicKey is the uncompressed point 04 ‖ x ‖ y (§7.1.1); HKDF-SM3 is RFC 5869
//     with HMAC-SM3; SM4-GCM is NIST SP 800-38D with SM4 (RFC 8998 §3.1), 12-byte nonce,
//     16-byte tag. DeriveKeyPair follows §7.1.3's P-256 procedure (bitmask 0xFF) with one
//     difference: a candidate is rejected when sk = 0 or sk ≥ n − 1, because SM2 private
//     keys lie in [1, n − 2] (GB/T 32918.1 §6.1); the KEM id in the suite_id is 0xFF10.
//
// Security: base mode gives IND-CCA2 confidentiality to whoever holds the recipient's
// private key; it does not authenticate the sender (RFC 9180 §9.1). `info` binds
// application context into the key schedule; `aad` is authenticated, not encrypted.
//
// Errors (house style): InvalidArgument with expected and actual values for malformed
// input (lengths, format version, suite ids, invalid points); InvalidArgument
// "decryption failed" for every authentication failure, never saying which check failed;
// FailedPrecondition for a key of another family ("key is RSA-2048, algorithm needs SM2");
// Internal for library faults. Constant time in every secret (private scalars, shared
// secrets, keys, plaintext). Secrets live in SecretData and are wiped when freed.
#ifndef SMCRYPT_HPKE_H_
#define SMCRYPT_HPKE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/primitives/hybrid_encrypt.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

// HpkeSuite selects one KEM/KDF/AEAD combination.
enum class HpkeSuite { kP256Sha256Aes128Gcm, kSm2Sm3Sm4Gcm };

// RFC 9180 §7 identifiers (see the header comment for the SM suite's values).
inline constexpr uint16_t kHpkeKemP256HkdfSha256 = 0x0010;
inline constexpr uint16_t kHpkeKdfHkdfSha256 = 0x0001;
inline constexpr uint16_t kHpkeAeadAes128Gcm = 0x0001;
inline constexpr uint16_t kHpkeKemSm2HkdfSm3 = 0xFF10;  // private use, not IANA-registered
inline constexpr uint16_t kHpkeKdfHkdfSm3 = 0xFF01;     // private use, not IANA-registered
inline constexpr uint16_t kHpkeAeadSm4Gcm = 0xFF01;     // private use, not IANA-registered

// HpkeSuiteIds are the (KEM, KDF, AEAD) ids of a suite.
struct HpkeSuiteIds {
  uint16_t kem_id;
  uint16_t kdf_id;
  uint16_t aead_id;
};
HpkeSuiteIds GetHpkeSuiteIds(HpkeSuite suite);
// HpkeSuiteName: "HPKE-P256-SHA256-AES128GCM" or "HPKE-SM2-SM3-SM4GCM" (docs/design.md names).
absl::string_view HpkeSuiteName(HpkeSuite suite);

// Sizes shared by both suites (bytes).
inline constexpr size_t kHpkeEncSize = 65;          // Nenc: uncompressed point
inline constexpr size_t kHpkePublicKeySize = 65;    // Npk
inline constexpr size_t kHpkePrivateKeySize = 32;   // Nsk
inline constexpr size_t kHpkeSharedSecretSize = 32; // Nsecret
inline constexpr size_t kHpkeTagSize = 16;          // Nt
inline constexpr size_t kHpkeMaxExportSize = 255 * 32;  // 255·Nh (RFC 5869 §2.3)

// ---- Wire format -------------------------------------------------------------------
//
// A HybridEncrypt ciphertext (docs/hpke.md "One-shot wire format"):
//
//   offset 0   1 byte   format version, 0x01
//   offset 1   2 bytes  kem_id  (big-endian)
//   offset 3   2 bytes  kdf_id  (big-endian)
//   offset 5   2 bytes  aead_id (big-endian)
//   offset 7   65 bytes enc (the ephemeral public key, uncompressed point)
//   offset 72  |pt|+16  AEAD ciphertext ‖ tag, sealed at sequence number 0
//
// The AEAD's aad is the 7-byte header (version and ids), so the header is authenticated
// even though RFC 9180's key schedule already binds the ids through suite_id; enc is
// bound by the KEM (it is hashed into the shared secret). HPKE `info` is the caller's
// `context_info`. Overhead: 7 + 65 + 16 = 88 bytes.
inline constexpr uint8_t kHpkeWireFormatVersion = 0x01;
inline constexpr size_t kHpkeWireHeaderSize = 7;
inline constexpr size_t kHpkeWireOverhead = kHpkeWireHeaderSize + kHpkeEncSize + kHpkeTagSize;

// HpkeWireHeader returns the 7-byte header for `suite`.
std::string HpkeWireHeader(HpkeSuite suite);

// HpkeWireMessage views the parts of a wire-format ciphertext (valid while the input lives).
struct HpkeWireMessage {
  absl::string_view header;      // 7 bytes
  absl::string_view enc;         // 65 bytes
  absl::string_view ciphertext;  // AEAD ciphertext ‖ tag, at least 16 bytes
};

// ParseHpkeWireMessage splits `in` and checks its header against `suite`. Errors:
// InvalidArgument "HPKE ciphertext: ..." for input shorter than 88 bytes (expected and
// actual sizes), a format version other than 0x01, or ids other than the suite's (each
// names expected and actual, e.g. "kem_id: expected 0xff10, got 0x0010").
absl::StatusOr<HpkeWireMessage> ParseHpkeWireMessage(HpkeSuite suite, absl::string_view in);

// ---- Keys --------------------------------------------------------------------------

// HpkeKeyPair is a KEM key pair in RFC 9180's serialized forms: `private_key` the
// 32-byte big-endian scalar (SerializePrivateKey, §7.1.2), `public_key` the 65-byte
// uncompressed point (SerializePublicKey, §7.1.1).
struct HpkeKeyPair {
  SecretData private_key;
  std::string public_key;
};

// HpkeDeriveKeyPair is DeriveKeyPair(ikm) (RFC 9180 §7.1.3) for the suite's KEM.
// `ikm` must hold at least Nsk = 32 bytes. Errors: InvalidArgument for a short ikm;
// Internal "DeriveKeyPairError" if 256 candidates are all rejected (probability ≈ 2^-8000).
absl::StatusOr<HpkeKeyPair> HpkeDeriveKeyPair(HpkeSuite suite, absl::string_view ikm);
// HpkeGenerateKeyPair is DeriveKeyPair over 32 bytes from the CSPRNG.
absl::StatusOr<HpkeKeyPair> HpkeGenerateKeyPair(HpkeSuite suite);

// HpkeParsePublicKey returns the serialized public key pkR (65-byte uncompressed point,
// Npk) of `recipient_public_key`, accepting the encodings NewHpkeEncrypt accepts and
// giving the same errors (NewHpkeEncrypt parses through it).
absl::StatusOr<std::string> HpkeParsePublicKey(HpkeSuite suite,
                                               absl::string_view recipient_public_key);
// HpkeParsePrivateKey returns the serialized private key skR (32-byte big-endian scalar,
// Nsk, in wiped storage) of `recipient_private_key`, accepting the encodings
// NewHpkeDecrypt accepts and giving the same errors (NewHpkeDecrypt parses through it).
// Constant time in the scalar.
absl::StatusOr<SecretData> HpkeParsePrivateKey(HpkeSuite suite,
                                               absl::string_view recipient_private_key);

// ---- Contexts ----------------------------------------------------------------------

// HpkeContext is an RFC 9180 §5.2 encryption context: key, base_nonce, exporter_secret
// and a sequence number. Seal (sender) and Open (recipient) use the nonce
// base_nonce XOR I2OSP(seq, 12) and then increment seq. seq is kept in 64 bits, so the
// context refuses with ResourceExhausted "HPKE sequence number overflow" once seq reaches
// 2^64 − 1 (stricter than §5.2's 2^96 − 1 limit, never reached in practice). Open
// increments seq only on success. Export (§5.3) works on both sides.
//
// Not thread-safe (Seal/Open mutate the sequence number); use one context per stream.
class HpkeContext {
 public:
  struct Sender;
  // SetupBaseS (§5.1.1): Encap to `recipient_public_key` (the 65-byte point, Npk), then
  // the key schedule with `info`. Returns enc (65 bytes) and the sender's context.
  // Errors: InvalidArgument for a public key of the wrong length, prefix or not on the
  // curve.
  static absl::StatusOr<Sender> SetupBaseS(HpkeSuite suite,
                                           absl::string_view recipient_public_key,
                                           absl::string_view info);
  // SetupBaseR (§5.1.1): Decap `enc` with `recipient_private_key` (the 32-byte scalar,
  // Nsk), then the key schedule with `info`. Errors: InvalidArgument for a wrong length,
  // a scalar out of range, or an enc that is not a valid point.
  static absl::StatusOr<std::unique_ptr<HpkeContext>> SetupBaseR(
      HpkeSuite suite, absl::string_view enc, absl::string_view recipient_private_key,
      absl::string_view info);

  ~HpkeContext();
  HpkeContext(const HpkeContext&) = delete;
  HpkeContext& operator=(const HpkeContext&) = delete;

  // Seal returns ciphertext ‖ tag (|pt| + 16 bytes). Plaintext up to the AEAD's limit
  // (2^36 − 32 bytes for GCM).
  absl::StatusOr<std::string> Seal(absl::string_view aad, absl::string_view plaintext);
  // Open returns the plaintext, or InvalidArgument "decryption failed".
  absl::StatusOr<std::string> Open(absl::string_view aad, absl::string_view ciphertext);
  // Export returns L bytes (1 ≤ L ≤ 255·Nh = 8160) of LabeledExpand(exporter_secret,
  // "sec", exporter_context, L). Errors: InvalidArgument for L outside that range.
  absl::StatusOr<SecretData> Export(absl::string_view exporter_context, size_t length) const;

  // sequence_number is the seq the next Seal/Open will use (low 64 bits).
  uint64_t sequence_number() const { return seq_; }
  HpkeSuite suite() const { return suite_; }

  // Internal: used by the implementation (hpke.cc); not part of the API contract.
  struct State;
  explicit HpkeContext(std::unique_ptr<State> state);

 private:
  absl::StatusOr<std::string> ComputeNonce() const;
  HpkeSuite suite_;
  friend struct HpkeContextAccess;  // test seam (crypto/hpke/hpke_internal.h)
  uint64_t seq_ = 0;
  std::unique_ptr<State> state_;
};

struct HpkeContext::Sender {
  std::string enc;                       // 65 bytes
  std::unique_ptr<HpkeContext> context;  // the sender's context
};

// ---- HybridEncrypt / HybridDecrypt -------------------------------------------------

// NewHpkeEncrypt returns a HybridEncrypt that writes the wire format above: each
// Encrypt runs SetupBaseS with a fresh ephemeral key and `context_info` as HPKE info,
// then one Seal. For HPKE-SM2-SM3-SM4GCM skE is uniform in [1, n − 1] from the CSPRNG
// (§4 GenerateKeyPair); EncryptMany computes 8 messages' skE·G and DH(skE, pkR) at a
// time in IFMA lanes and their key schedules in SM3 lanes, each with its own skE. For
// HPKE-P256-SHA256-AES128GCM the recipient's key is parsed and validated once, into an
// OpenSSL key object the HybridEncrypt keeps, and skE is OpenSSL's EVP_PKEY_keygen
// (uniform in [1, n − 1], §4 GenerateKeyPair): one key generation and one ECDH per message.
// `recipient_public_key`: SubjectPublicKeyInfo (DER or PEM "PUBLIC KEY"),
// or a raw 65-byte uncompressed / 33-byte compressed point; for the SM suite an SM2 key
// (id-ecPublicKey with curve sm2p256v1, or the older 1.2.156.10197.1.301 form), for the
// P-256 suite an EC P-256 key. Errors: InvalidArgument for unparseable bytes or an
// invalid point; FailedPrecondition for a key of another family or curve.
absl::StatusOr<std::unique_ptr<HybridEncrypt>> NewHpkeEncrypt(
    HpkeSuite suite, absl::string_view recipient_public_key);

// NewHpkeDecrypt returns the matching HybridDecrypt. `recipient_private_key`: PKCS#8
// (DER or PEM "PRIVATE KEY") or the raw 32-byte scalar (for the P-256 suite kept as an
// OpenSSL key object: each Decrypt decodes and validates enc and runs one ECDH). Decrypt errors: those of
// ParseHpkeWireMessage for a malformed header or short input; InvalidArgument
// "decryption failed" when enc is not a valid point or any authentication fails (so a
// flipped bit anywhere after the header gives that one message).
absl::StatusOr<std::unique_ptr<HybridDecrypt>> NewHpkeDecrypt(
    HpkeSuite suite, absl::string_view recipient_private_key);

}  // namespace smcrypt

#endif  // SMCRYPT_HPKE_H_
