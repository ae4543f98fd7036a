// rsa_pss_sign_openssl.h — RSASSA-PSS signatures (RFC 8017 §8.1) with SHA-256,
// MGF1-SHA-256 and a 32-byte salt, on RSA-2048 or RSA-3072, through OpenSSL 3 EVP.
#ifndef SMCRYPT_CRYPTO_OPENSSL_RSA_PSS_SIGN_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_RSA_PSS_SIGN_OPENSSL_H_

#include <memory>
#include <string>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/public_key_sign.h"

namespace smcrypt {

inline constexpr int kRsaPssSaltSize = 32;  // bytes, = the SHA-256 digest size

// RsaPssSignOpenSsl signs with an RSA private key. `data` is the message (hashed with
// SHA-256) or, when `prehashed`, the 32-byte digest. The signature is k bytes (the
// modulus size: 256 for RSA-2048, 384 for RSA-3072); the salt is fresh from the CSPRNG
// every call. OpenSSL blinds the private-key operation.
// Errors: InvalidArgument when `prehashed` and `data` is not 32 bytes.
// Thread safety: const methods, safe to call concurrently on one object.
class RsaPssSignOpenSsl final : public PublicKeySign {
 public:
  // New takes `alg` kRsa2048Pss or kRsa3072Pss and a PKCS#8 private key (DER or PEM).
  // Errors: InvalidArgument for another algorithm or an unparsable key;
  // FailedPrecondition "key is RSA-3072, algorithm needs RSA-2048" (or another family).
  static absl::StatusOr<std::unique_ptr<RsaPssSignOpenSsl>> New(Algorithm alg,
                                                                absl::string_view private_key,
                                                                bool prehashed = false);

  absl::StatusOr<std::string> Sign(absl::string_view data) const override;

 private:
  RsaPssSignOpenSsl(Algorithm alg, SslUniquePtr<EVP_PKEY> key, bool prehashed)
      : alg_(alg), key_(std::move(key)), prehashed_(prehashed) {}

  const Algorithm alg_;
  SslUniquePtr<EVP_PKEY> key_;
  const bool prehashed_;
};

// RsaPssKeySpecFor returns the key spec of kRsa2048Pss / kRsa3072Pss, else
// InvalidArgument "<alg> is not an RSA-PSS algorithm".
absl::StatusOr<const KeySpec*> RsaPssKeySpecFor(Algorithm alg);

// ConfigureRsaPss sets PSS padding, MGF1-SHA-256 and the 32-byte salt on `ctx`.
absl::Status ConfigureRsaPss(EVP_PKEY_CTX* ctx);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_RSA_PSS_SIGN_OPENSSL_H_
