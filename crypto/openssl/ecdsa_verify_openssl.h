// ecdsa_verify_openssl.h — ECDSA verification over SHA-256 (FIPS 186-4 §6.4, SEC 1
// §4.1.4) on P-256 or secp256k1, through OpenSSL 3 EVP.
#ifndef SMCRYPT_CRYPTO_OPENSSL_ECDSA_VERIFY_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_ECDSA_VERIFY_OPENSSL_H_

#include <memory>

#include <openssl/evp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/public_key_verify.h"
#include "smcrypt/sm2.h"

namespace smcrypt {

// EcdsaVerifyOpenSsl checks ECDSA signatures. `data` is the message or, when
// `prehashed`, its 32-byte SHA-256 digest. Signatures are DER SEQUENCE { r, s }, parsed
// strictly (minimal lengths and INTEGERs, non-negative, below 2^256, no trailing bytes),
// or raw r ‖ s (exactly 64 bytes).
//
// Returns OK for a valid signature; kUnauthenticated "signature invalid" for a well-
// encoded one that does not verify (including r or s = 0 or ≥ n); InvalidArgument for a
// malformed signature or a digest that is not 32 bytes.
// Thread safety: const methods, safe to call concurrently on one object.
class EcdsaVerifyOpenSsl final : public PublicKeyVerify {
 public:
  // New takes `alg` kEcdsaP256 or kEcdsaSecp256k1 and a public key as
  // SubjectPublicKeyInfo (DER or PEM) or a 65/33-byte point; the point is validated.
  // Errors: InvalidArgument for another algorithm or an unparsable or invalid key;
  // FailedPrecondition "key is <X>, algorithm needs <Y>" for another family or curve.
  static absl::StatusOr<std::unique_ptr<EcdsaVerifyOpenSsl>> New(
      Algorithm alg, absl::string_view public_key,
      SignatureEncoding encoding = SignatureEncoding::kDer, bool prehashed = false);

  absl::Status Verify(absl::string_view signature, absl::string_view data) const override;

 private:
  EcdsaVerifyOpenSsl(Algorithm alg, SslUniquePtr<EVP_PKEY> key, SignatureEncoding encoding,
                     bool prehashed)
      : alg_(alg), key_(std::move(key)), encoding_(encoding), prehashed_(prehashed) {}

  const Algorithm alg_;
  SslUniquePtr<EVP_PKEY> key_;
  const SignatureEncoding encoding_;
  const bool prehashed_;
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_ECDSA_VERIFY_OPENSSL_H_
