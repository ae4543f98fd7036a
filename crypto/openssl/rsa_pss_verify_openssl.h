// rsa_pss_verify_openssl.h — RSASSA-PSS verification (RFC 8017 §8.1.2) with SHA-256,
// MGF1-SHA-256 and a 32-byte salt, on RSA-2048 or RSA-3072, through OpenSSL 3 EVP.
#ifndef SMCRYPT_CRYPTO_OPENSSL_RSA_PSS_VERIFY_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_RSA_PSS_VERIFY_OPENSSL_H_

#include <memory>

#include <openssl/evp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/public_key_verify.h"

namespace smcrypt {

// RsaPssVerifyOpenSsl checks RSA-PSS signatures. `data` is the message or, when
// `prehashed`, its 32-byte SHA-256 digest. The salt must be exactly 32 bytes.
// Returns OK for a valid signature; kUnauthenticated "signature invalid" for a k-byte
// signature that does not verify (including a value ≥ n); InvalidArgument for a
// signature that is not k bytes or a digest that is not 32 bytes.
// Thread safety: const methods, safe to call concurrently on one object.
class RsaPssVerifyOpenSsl final : public PublicKeyVerify {
 public:
  // New takes `alg` kRsa2048Pss or kRsa3072Pss and a SubjectPublicKeyInfo (DER or PEM).
  // Errors: InvalidArgument for another algorithm or an unparsable key;
  // FailedPrecondition for a key of another family or modulus size.
  static absl::StatusOr<std::unique_ptr<RsaPssVerifyOpenSsl>> New(Algorithm alg,
                                                                  absl::string_view public_key,
                                                                  bool prehashed = false);

  absl::Status Verify(absl::string_view signature, absl::string_view data) const override;

 private:
  RsaPssVerifyOpenSsl(Algorithm alg, SslUniquePtr<EVP_PKEY> key, bool prehashed)
      : alg_(alg), key_(std::move(key)), prehashed_(prehashed) {}

  const Algorithm alg_;
  SslUniquePtr<EVP_PKEY> key_;
  const bool prehashed_;
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_RSA_PSS_VERIFY_OPENSSL_H_
