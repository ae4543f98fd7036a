// ecdh_p256_openssl.h — ECDH on P-256 (SEC 1 §3.3.1, NIST SP 800-56A §5.7.1.2) through
// OpenSSL 3 EVP: the raw shared secret is the x-coordinate of d·Q, 32 bytes.
#ifndef SMCRYPT_CRYPTO_OPENSSL_ECDH_P256_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_ECDH_P256_OPENSSL_H_

#include <cstddef>
#include <memory>
#include <string>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

inline constexpr size_t kEcdhP256SharedSecretSize = 32;  // bytes

// EcdhP256OpenSsl holds a P-256 private key d and computes shared secrets with peers.
// The scalar multiplication is OpenSSL's constant-time one; the peer's key is validated
// (on the curve, not infinity; cofactor 1) before use. Used by HPKE's DHKEM(P-256).
// Thread safety: const methods, safe to call concurrently on one object.
class EcdhP256OpenSsl {
 public:
  // New takes the private key as PKCS#8 (DER or PEM) or the raw 32-byte scalar d
  // (1 ≤ d < n). Errors: InvalidArgument as openssl_keys.h ("EC P-256 private key:
  // scalar out of range [1, n-1]" included, so HPKE's DeriveKeyPair can retry);
  // FailedPrecondition for a key of another family or curve.
  static absl::StatusOr<std::unique_ptr<EcdhP256OpenSsl>> New(absl::string_view private_key);
  // Generate draws a fresh key pair from OpenSSL's CSPRNG.
  static absl::StatusOr<std::unique_ptr<EcdhP256OpenSsl>> Generate();

  // ComputeSharedSecret returns x(d·Q) (32 bytes, big-endian) for the peer public key Q,
  // given as a 65-byte uncompressed or 33-byte compressed point or SubjectPublicKeyInfo
  // (DER or PEM). Errors: InvalidArgument as openssl_keys.h for a malformed or invalid
  // point; FailedPrecondition for a key on another curve.
  absl::StatusOr<SecretData> ComputeSharedSecret(absl::string_view peer_public_key) const;

  // public_point is Q = d·G as a 65-byte uncompressed point (04 ‖ x ‖ y).
  const std::string& public_point() const { return public_point_; }
  // PrivateScalar returns d as 32 big-endian bytes.
  absl::StatusOr<SecretData> PrivateScalar() const;
  // PrivateKeyPkcs8 / PublicKeySpki return the DER encodings.
  absl::StatusOr<SecretData> PrivateKeyPkcs8() const;
  absl::StatusOr<std::string> PublicKeySpki() const;

 private:
  static absl::StatusOr<std::unique_ptr<EcdhP256OpenSsl>> FromKey(SslUniquePtr<EVP_PKEY> key);
  EcdhP256OpenSsl(SslUniquePtr<EVP_PKEY> key, std::string public_point)
      : key_(std::move(key)), public_point_(std::move(public_point)) {}

  SslUniquePtr<EVP_PKEY> key_;
  const std::string public_point_;
};

// EcdhP256Derive returns the 32-byte x(d·Q) for `own` (a P-256 key holding d) and `peer`
// (holding Q). The peer must have been validated when it was parsed (on the curve, not
// infinity; cofactor 1): it is not validated again, since OpenSSL's check at derive is the
// full one, whose n·Q costs as much as the ECDH itself. Errors: Internal from OpenSSL.
absl::StatusOr<SecretData> EcdhP256Derive(EVP_PKEY* own, EVP_PKEY* peer);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_ECDH_P256_OPENSSL_H_
