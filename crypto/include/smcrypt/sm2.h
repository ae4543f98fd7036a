// sm2.h — SM2 public-key cryptography on the curve sm2p256v1 (GB/T 32918-2016 parts 1,
// 2, 4 and 5; GM/T 0003-2012): key pairs, digital signatures, public-key encryption, and
// the DER/PEM encodings of GM/T 0009-2012 (GB/T 35276) and RFC 5280/5208.
//
// Constant time: every operation with the private key d or a nonce k (signing, C1 and the
// shared point in encryption/decryption, key generation) runs in time independent of those
// secrets, on every back end. Verification and public-key parsing handle public data only.
#ifndef SMCRYPT_SM2_H_
#define SMCRYPT_SM2_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

inline constexpr size_t kSm2ScalarSize = 32;           // bytes: d, k, r, s, coordinates
inline constexpr size_t kSm2PointSize = 65;            // 04 ‖ x ‖ y
inline constexpr size_t kSm2CompressedPointSize = 33;  // 02/03 ‖ x
inline constexpr size_t kSm2RawSignatureSize = 64;     // r ‖ s
inline constexpr size_t kSm2C3Size = 32;               // SM3 digest in the ciphertext
inline constexpr size_t kSm2MaxUserIdSize = 8191;      // bytes: ENTL is a 16-bit bit count
// GM/T 0009-2012 §10: the default user ID when the parties agree on none.
inline constexpr absl::string_view kSm2DefaultUserId = "1234567812345678";

// SignatureEncoding: DER SEQUENCE { r INTEGER, s INTEGER } (GM/T 0009 §7.3, as OpenSSL
// writes), or raw r ‖ s with each integer left-padded to the scalar size.
enum class SignatureEncoding { kDer, kRaw };

// Sm2CiphertextFormat: C1‖C3‖C2 (GB/T 32918.4-2016 §6.1), DER SM2Cipher
// (GM/T 0009 §7.2: SEQUENCE { XCoordinate INTEGER, YCoordinate INTEGER, HASH OCTET
// STRING, CipherText OCTET STRING }, as OpenSSL and GmSSL write), or the legacy
// C1‖C2‖C3 of the 2010 draft.
enum class Sm2CiphertextFormat { kC1C3C2, kC1C2C3, kDer };

class Sm2PublicKey;
namespace internal {
// Defined in crypto/sm2/sm2_keys.cc; declared for callers in crypto/sm2/sm2_internal.h.
absl::StatusOr<Sm2PublicKey> Sm2PointFromBytes(absl::string_view point, absl::string_view name);
}  // namespace internal

// Sm2PublicKey is a validated point P = (x, y) on sm2p256v1 (GB/T 32918.1 §6.2.1 checks:
// not the point at infinity, 0 ≤ x, y < p, y² = x³ + ax + b; h = 1 so no subgroup check).
class Sm2PublicKey {
 public:
  // FromPoint parses a 65-byte uncompressed (04 ‖ x ‖ y) or 33-byte compressed
  // (02/03 ‖ x, GB/T 32918.1 §4.2.10) point and validates it.
  // Errors: InvalidArgument "SM2 public key: ..." naming the failed check (length,
  // prefix byte, coordinate not below p, not on the curve, no square root).
  static absl::StatusOr<Sm2PublicKey> FromPoint(absl::string_view point);
  // ToPoint returns the uncompressed (65 bytes) or compressed (33 bytes) encoding.
  std::string ToPoint(bool compressed = false) const;
  const uint8_t* x() const { return point_ + 1; }  // 32 bytes, big-endian
  const uint8_t* y() const { return point_ + 33; }  // 32 bytes, big-endian
  bool operator==(const Sm2PublicKey& o) const;

 private:
  friend class Sm2PrivateKey;  // holds one as a member
  friend absl::StatusOr<Sm2PublicKey> internal::Sm2PointFromBytes(absl::string_view,
                                                                  absl::string_view);
  Sm2PublicKey() = default;
  uint8_t point_[kSm2PointSize] = {};
};

// Sm2PrivateKey holds d ∈ [1, n − 2] (GB/T 32918.1 §6.1), its public key P = dG, and
// (1 + d)⁻¹ mod n, precomputed for signing. Secrets are wiped when the object dies.
class Sm2PrivateKey {
 public:
  // FromScalar takes d as 32 big-endian bytes. Errors: InvalidArgument for a wrong
  // length, or d = 0 or d ≥ n − 1 ("SM2 private key out of range [1, n-2]").
  static absl::StatusOr<Sm2PrivateKey> FromScalar(absl::string_view d);
  // Generate draws d uniformly from [1, n − 2] with OpenSSL's CSPRNG (§6.1).
  static absl::StatusOr<Sm2PrivateKey> Generate();
  // ToScalar returns d as 32 big-endian bytes.
  SecretData ToScalar() const;
  const Sm2PublicKey& public_key() const { return public_key_; }

 private:
  Sm2PrivateKey() = default;
  SecretData d_;           // 32 bytes, big-endian
  SecretData d1_inv_;      // (1 + d)^-1 * 2^256 mod n (Montgomery form), 32 bytes big-endian
  Sm2PublicKey public_key_;
  friend struct Sm2PrivateKeyAccess;
};

// Sm2ComputeZ returns Z = SM3(ENTL ‖ ID ‖ a ‖ b ‖ xG ‖ yG ‖ xA ‖ yA) (GB/T 32918.2 §5.5),
// where ENTL is the 16-bit big-endian bit length of `user_id`.
// Errors: InvalidArgument when `user_id` is longer than 8191 bytes.
absl::StatusOr<std::array<uint8_t, 32>> Sm2ComputeZ(const Sm2PublicKey& key,
                                                     absl::string_view user_id);

// Sm2ComputeE returns e = SM3(Z ‖ M) for message `message` (§6.1 A1–A2).
absl::StatusOr<std::array<uint8_t, 32>> Sm2ComputeE(const Sm2PublicKey& key,
                                                     absl::string_view user_id,
                                                     absl::string_view message);

// Sm2SignDigest signs the 32-byte digest e (GB/T 32918.2 §6.1 A3–A7) and returns raw
// r ‖ s (64 bytes). k is drawn from the CSPRNG; the steps that reject k (r = 0,
// r + k = n, s = 0) draw again. Errors: InvalidArgument when `e` is not 32 bytes.
absl::StatusOr<std::string> Sm2SignDigest(const Sm2PrivateKey& key, absl::string_view e);

// Sm2VerifyDigest checks raw r ‖ s (64 bytes) over the 32-byte digest e (§7.1 B1–B7).
// Returns OK when valid; kUnauthenticated "signature invalid" when r or s is outside
// [1, n − 1], t = 0, or R ≠ r; InvalidArgument for wrong input lengths.
absl::Status Sm2VerifyDigest(const Sm2PublicKey& key, absl::string_view e,
                             absl::string_view signature);

// Sm2Encrypt encrypts `message` (GB/T 32918.4 §6.1 A1–A8) in `format`; C1 is
// uncompressed (or compressed, 33 bytes, when `compress_c1`). For C1C3C2 and C1C2C3 the
// output is 65 (or 33) + 32 + |M| bytes. If the KDF output t is all zero (A5) a new k is
// drawn. An empty message is allowed (C2 is empty).
absl::StatusOr<std::string> Sm2Encrypt(const Sm2PublicKey& key, absl::string_view message,
                                       Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2,
                                       bool compress_c1 = false);

// Sm2Decrypt decrypts (§7.1 B1–B7). In the two raw formats C1 may be uncompressed
// (65 bytes), compressed (33 bytes) or unprefixed x1 ‖ y1 (64 bytes, as some writers
// send it); DER SM2Cipher must be strict DER, its coordinates minimal non-negative
// INTEGERs (as Sm2CiphertextConvert reads it). Errors: InvalidArgument with the reason for
// a malformed input (too short, C1 not a valid point, not DER); InvalidArgument
// "decryption failed" when t is all zero or C3 does not match (compared in constant time).
absl::StatusOr<std::string> Sm2Decrypt(const Sm2PrivateKey& key, absl::string_view ciphertext,
                                       Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2);

// ---- Encodings -------------------------------------------------------------------

// Sm2SignatureToDer converts raw r ‖ s (64 bytes) to DER with minimal INTEGERs.
absl::StatusOr<std::string> Sm2SignatureToDer(absl::string_view raw);
// Sm2SignatureFromDer parses DER SEQUENCE { r, s } strictly (no trailing bytes, minimal
// lengths and INTEGERs, non-negative, each < 2^256) and returns raw r ‖ s.
// Errors: InvalidArgument naming the defect.
absl::StatusOr<std::string> Sm2SignatureFromDer(absl::string_view der);

// Sm2CiphertextConvert re-encodes a ciphertext between the three formats (C1 in the
// output is uncompressed). DER SM2Cipher is read strictly (minimal lengths, coordinates as
// minimal non-negative INTEGERs of at most 32 bytes, HASH of 32 bytes, nothing after the
// SEQUENCE) and written as OpenSSL writes it. Errors: InvalidArgument for a malformed input
// ("SM2Cipher C1 x: DER: non-minimal INTEGER", ...).
absl::StatusOr<std::string> Sm2CiphertextConvert(absl::string_view ciphertext,
                                                 Sm2CiphertextFormat from,
                                                 Sm2CiphertextFormat to);

// Keys as SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) and PKCS#8 PrivateKeyInfo (RFC 5208)
// with the EC private key of RFC 5915, as OpenSSL 3 writes them: algorithm
// id-ecPublicKey (1.2.840.10045.2.1) with parameters sm2p256v1 (1.2.156.10197.1.301).
// Parsing also accepts the older form whose algorithm OID is 1.2.156.10197.1.301 itself.
std::string Sm2PublicKeyToSpki(const Sm2PublicKey& key);
absl::StatusOr<Sm2PublicKey> Sm2PublicKeyFromSpki(absl::string_view der);
SecretData Sm2PrivateKeyToPkcs8(const Sm2PrivateKey& key);
// Sm2PrivateKeyFromPkcs8 accepts PKCS#8 with or without the optional public key; when
// present, it must match d·G (else InvalidArgument).
absl::StatusOr<Sm2PrivateKey> Sm2PrivateKeyFromPkcs8(absl::string_view der);

}  // namespace smcrypt

#endif  // SMCRYPT_SM2_H_
