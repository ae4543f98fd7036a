// rsa_oaep_encrypt_openssl.h — RSAES-OAEP encryption (RFC 8017 §7.1.1) with SHA-256,
// MGF1-SHA-256 and an empty label, on RSA-2048 or RSA-3072, through OpenSSL 3 EVP.
#ifndef SMCRYPT_CRYPTO_OPENSSL_RSA_OAEP_ENCRYPT_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_RSA_OAEP_ENCRYPT_OPENSSL_H_

#include <cstddef>
#include <memory>
#include <string>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/public_key_encrypt.h"

namespace smcrypt {

// kRsaOaepOverhead is 2·hLen + 2 with hLen = 32 (SHA-256): the plaintext limit is
// k − 66 bytes (190 for RSA-2048, 318 for RSA-3072).
inline constexpr size_t kRsaOaepOverhead = 66;

// RsaOaepEncryptOpenSsl encrypts to an RSA public key. Randomized (the OAEP seed comes
// from the CSPRNG). The ciphertext is k bytes (256 or 384).
// Errors: InvalidArgument "RSA-2048-OAEP plaintext must be at most 190 bytes, got N".
// Thread safety: const methods, safe to call concurrently on one object.
class RsaOaepEncryptOpenSsl final : public PublicKeyEncrypt {
 public:
  // New takes `alg` kRsa2048Oaep or kRsa3072Oaep and a SubjectPublicKeyInfo (DER or
  // PEM). Errors: InvalidArgument for another algorithm or an unparsable key;
  // FailedPrecondition for a key of another family or modulus size.
  static absl::StatusOr<std::unique_ptr<RsaOaepEncryptOpenSsl>> New(Algorithm alg,
                                                                    absl::string_view public_key);

  absl::StatusOr<std::string> Encrypt(absl::string_view plaintext) const override;

 private:
  RsaOaepEncryptOpenSsl(Algorithm alg, SslUniquePtr<EVP_PKEY> key)
      : alg_(alg), key_(std::move(key)) {}

  const Algorithm alg_;
  SslUniquePtr<EVP_PKEY> key_;
};

// RsaOaepKeySpecFor returns the key spec of kRsa2048Oaep / kRsa3072Oaep, else
// InvalidArgument "<alg> is not an RSA-OAEP algorithm".
absl::StatusOr<const KeySpec*> RsaOaepKeySpecFor(Algorithm alg);

// ConfigureRsaOaep sets OAEP padding with SHA-256, MGF1-SHA-256 and an empty label.
absl::Status ConfigureRsaOaep(EVP_PKEY_CTX* ctx);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_RSA_OAEP_ENCRYPT_OPENSSL_H_
