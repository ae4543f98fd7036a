// ecdsa_sign_openssl.h — ECDSA signatures over SHA-256 (FIPS 186-4 §6.4, SEC 1 §4.1.3)
// on P-256 or secp256k1, through OpenSSL 3 EVP.
#ifndef SMCRYPT_CRYPTO_OPENSSL_ECDSA_SIGN_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_ECDSA_SIGN_OPENSSL_H_

#include <memory>
#include <string>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/public_key_sign.h"
#include "smcrypt/sm2.h"

namespace smcrypt {

inline constexpr size_t kEcdsaRawSignatureSize = 64;  // r ‖ s, 32 bytes each
inline constexpr size_t kEcdsaMaxDerSignatureSize = 72;

// EcdsaSignOpenSsl signs with an ECDSA private key. `data` is the message (hashed with
// SHA-256) or, when `prehashed`, the 32-byte SHA-256 digest itself. The signature is
// DER SEQUENCE { r, s } (RFC 3279 §2.2.3, at most 72 bytes) or raw r ‖ s (64 bytes).
// The nonce k comes from OpenSSL's CSPRNG (mixed with the private key), so every call
// gives a different signature; the scalar multiplication is OpenSSL's constant-time one.
//
// Errors: InvalidArgument when `prehashed` and `data` is not 32 bytes.
// Thread safety: const methods, safe to call concurrently on one object.
class EcdsaSignOpenSsl final : public PublicKeySign {
 public:
  // New takes `alg` kEcdsaP256 or kEcdsaSecp256k1 and a private key as PKCS#8 (DER or
  // PEM) or a raw 32-byte scalar. Errors: InvalidArgument for another algorithm or an
  // unparsable key; FailedPrecondition "key is <X>, algorithm needs <Y>" for a key of
  // another family or curve.
  static absl::StatusOr<std::unique_ptr<EcdsaSignOpenSsl>> New(
      Algorithm alg, absl::string_view private_key,
      SignatureEncoding encoding = SignatureEncoding::kDer, bool prehashed = false);

  absl::StatusOr<std::string> Sign(absl::string_view data) const override;

 private:
  EcdsaSignOpenSsl(Algorithm alg, SslUniquePtr<EVP_PKEY> key, SignatureEncoding encoding,
                   bool prehashed)
      : alg_(alg), key_(std::move(key)), encoding_(encoding), prehashed_(prehashed) {}

  const Algorithm alg_;
  SslUniquePtr<EVP_PKEY> key_;
  const SignatureEncoding encoding_;
  const bool prehashed_;
};

// EcdsaKeySpecFor returns the key spec of kEcdsaP256 / kEcdsaSecp256k1, else
// InvalidArgument "<alg> is not an ECDSA algorithm".
absl::StatusOr<const KeySpec*> EcdsaKeySpecFor(Algorithm alg);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_ECDSA_SIGN_OPENSSL_H_
