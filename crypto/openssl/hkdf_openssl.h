// hkdf_openssl.h — HKDF-SHA256 (RFC 5869) over OpenSSL 3's HMAC-SHA-256 (EVP_MAC, the
// digest fetched once), and the P-256 operations HPKE's DHKEM(P-256, HKDF-SHA256) needs
// (RFC 9180 §4.1, §7.1), on OpenSSL's constant-time P-256 code. The key-format helpers
// read the encodings of openssl_keys.h for HPKE's raw forms.
//
// Internal header (crypto/hpke and tests). It includes no OpenSSL header, so callers
// outside crypto/openssl can use it.
#ifndef SMCRYPT_CRYPTO_OPENSSL_HKDF_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_HKDF_OPENSSL_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

inline constexpr size_t kHkdfSha256HashSize = 32;  // Nh, bytes

// HkdfSha256Extract returns PRK = HMAC-SHA-256(salt, ikm), 32 bytes (RFC 5869 §2.2). An
// empty salt means 32 zero bytes. Errors: InvalidArgument for an empty ikm (OpenSSL's
// HKDF needs a key); Internal when OpenSSL fails.
absl::StatusOr<SecretData> HkdfSha256Extract(absl::string_view salt, absl::string_view ikm);

// HkdfSha256Expand returns OKM of `length` bytes (RFC 5869 §2.3) from a PRK of at least
// 32 bytes. Errors: InvalidArgument for length 0 or > 255·32 = 8160, or a short PRK.
absl::StatusOr<SecretData> HkdfSha256Expand(absl::string_view prk, absl::string_view info,
                                            size_t length);

// P256PublicPointFromScalar returns sk·G as a 65-byte uncompressed point (SEC 1 §2.3.3)
// for the 32-byte big-endian scalar sk, 1 ≤ sk < n. Errors: InvalidArgument for a wrong
// length or a scalar out of range.
absl::StatusOr<std::string> P256PublicPointFromScalar(absl::string_view sk);

// P256Dh returns the x-coordinate of sk·Q (32 bytes) for the 65-byte uncompressed peer
// point Q, which is validated (on the curve, not infinity). Errors: InvalidArgument for
// an invalid point or scalar.
absl::StatusOr<SecretData> P256Dh(absl::string_view sk, absl::string_view peer_point);

// P256PrivateScalarFromKey reads a P-256 private key (PKCS#8 DER/PEM or the raw 32-byte
// scalar) and returns d (32 bytes). P256PublicPointFromKey reads a P-256 public key
// (SubjectPublicKeyInfo DER/PEM, or a 65/33-byte point) and returns the 65-byte point.
// Errors as openssl_keys.h: InvalidArgument "expected an EC P-256 ... key as ...; got N
// bytes (...)" or "EC P-256 ... key: ..."; FailedPrecondition "key is <X>, algorithm
// needs EC P-256" for another family or curve.
absl::StatusOr<SecretData> P256PrivateScalarFromKey(absl::string_view key);
absl::StatusOr<std::string> P256PublicPointFromKey(absl::string_view key);

// DescribeEncodedKey names the family of a DER or PEM key (SubjectPublicKeyInfo or
// PKCS#8) as openssl_keys.h's DescribeKey does ("RSA-2048", "EC P-256", "SM2", ...), or
// returns an empty string when OpenSSL cannot read the bytes as either.
std::string DescribeEncodedKey(absl::string_view key);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_HKDF_OPENSSL_H_
