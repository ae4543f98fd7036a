// openssl_keys.h — reading, checking, generating and writing the asymmetric keys of the
// international algorithms (ECDSA P-256/secp256k1, ECDH P-256, RSA-2048/3072).
//
// Internal header (crypto/openssl only). Accepted encodings:
//   private keys: PKCS#8 PrivateKeyInfo (RFC 5208), DER or PEM "PRIVATE KEY"; for EC
//                 also the raw 32-byte big-endian scalar d, 1 ≤ d < n (SEC 1 §3.2.1).
//   public keys:  SubjectPublicKeyInfo (RFC 5280 §4.1.2.7), DER or PEM "PUBLIC KEY";
//                 for EC also the 65-byte uncompressed (04 ‖ x ‖ y) or 33-byte
//                 compressed (02/03 ‖ x) point (SEC 1 §2.3.3).
// Errors: InvalidArgument, for bytes that are none of these, UnparsableKeyError's
// "expected an <Y> private key as PKCS#8 DER or PEM[, or a 32-byte scalar]; got N bytes
// (<reason>)" (public keys likewise, crypto/common/key_errors.h; the reason is the DER
// reader's for a first byte that is not a SEQUENCE, else a fixed one such as "not
// SubjectPublicKeyInfo DER": OpenSSL's details are not included); for a key in one of
// these forms that is not valid, "<Y> private key: scalar out of range [1, n-1]", "<Y>
// public key: not a valid point on the curve", "<Y> private key: does not match its
// public key"; FailedPrecondition "key is <X>, algorithm needs <Y>" for a key of another
// family, curve or modulus size (X, Y like "RSA-2048", "EC P-256", "EC secp256k1", "SM2").
// EC public keys are validated (on the curve, not infinity; both curves have cofactor
// 1), EC private keys are checked against their public key.
//
// Private key bytes pass only through SecretData or buffers wiped with OPENSSL_cleanse.
#ifndef SMCRYPT_CRYPTO_OPENSSL_OPENSSL_KEYS_H_
#define SMCRYPT_CRYPTO_OPENSSL_OPENSSL_KEYS_H_

#include <cstddef>
#include <string>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

// KeySpec names the key an algorithm needs.
struct KeySpec {
  enum class Type { kEc, kRsa };
  Type type;
  const char* ec_group;  // OpenSSL group name for kEc ("prime256v1", "secp256k1")
  int ec_nid;            // NID of that group, or 0
  int rsa_bits;          // modulus size in bits for kRsa, or 0
  const char* name;      // "EC P-256", "EC secp256k1", "RSA-2048", "RSA-3072"
};

inline constexpr size_t kEcScalarSize = 32;          // bytes, P-256 and secp256k1
inline constexpr size_t kEcPointSize = 65;           // 04 ‖ x ‖ y
inline constexpr size_t kEcCompressedPointSize = 33;  // 02/03 ‖ x

const KeySpec& EcP256KeySpec();
const KeySpec& EcSecp256k1KeySpec();
const KeySpec& Rsa2048KeySpec();
const KeySpec& Rsa3072KeySpec();

// DescribeKey names the key's family, curve or size as in the errors above; other key
// types give OpenSSL's type name ("ED25519").
std::string DescribeKey(const EVP_PKEY* pkey);

// CheckKeySpec returns OK when `pkey` is the key `spec` asks for, else
// FailedPrecondition "key is <DescribeKey>, algorithm needs <spec.name>".
absl::Status CheckKeySpec(const EVP_PKEY* pkey, const KeySpec& spec);

// ParsePrivateKey reads a private key in any accepted encoding and checks it is `spec`.
absl::StatusOr<SslUniquePtr<EVP_PKEY>> ParsePrivateKey(absl::string_view in,
                                                       const KeySpec& spec);
// ParsePublicKey reads a public key in any accepted encoding, checks it is `spec` and
// validates EC points.
absl::StatusOr<SslUniquePtr<EVP_PKEY>> ParsePublicKey(absl::string_view in,
                                                      const KeySpec& spec);

// GenerateKey makes a fresh key pair of `spec` with OpenSSL's CSPRNG.
absl::StatusOr<SslUniquePtr<EVP_PKEY>> GenerateKey(const KeySpec& spec);

// EncodePkcs8 writes the private key as PKCS#8 DER; EC keys carry the named curve and
// the public key (RFC 5915), as `openssl pkey` writes them.
absl::StatusOr<SecretData> EncodePkcs8(const EVP_PKEY* pkey);
// EncodeSpki writes the public key as SubjectPublicKeyInfo DER (EC: named curve,
// uncompressed point).
absl::StatusOr<std::string> EncodeSpki(const EVP_PKEY* pkey);

// EcPublicPoint returns the EC public key as a 65-byte uncompressed point.
absl::StatusOr<std::string> EcPublicPoint(const EVP_PKEY* pkey);
// EcPrivateScalar returns the EC private scalar d as 32 big-endian bytes.
absl::StatusOr<SecretData> EcPrivateScalar(const EVP_PKEY* pkey);

// RsaModulusSize returns k, the RSA modulus length in bytes.
size_t RsaModulusSize(const EVP_PKEY* pkey);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_OPENSSL_KEYS_H_
