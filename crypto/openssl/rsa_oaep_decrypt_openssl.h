// rsa_oaep_decrypt_openssl.h — RSAES-OAEP decryption (RFC 8017 §7.1.2) with SHA-256,
// MGF1-SHA-256 and an empty label, on RSA-2048 or RSA-3072, through OpenSSL 3 EVP.
#ifndef SMCRYPT_CRYPTO_OPENSSL_RSA_OAEP_DECRYPT_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_RSA_OAEP_DECRYPT_OPENSSL_H_

#include <memory>
#include <string>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/public_key_encrypt.h"

namespace smcrypt {

// RsaOaepDecryptOpenSsl decrypts with an RSA private key. OpenSSL decodes OAEP in
// constant time and blinds the private-key operation.
// Errors: InvalidArgument with expected and actual sizes for a ciphertext that is not k
// bytes; InvalidArgument "decryption failed" for any decoding failure (one message
// whatever check failed; the output buffer is wiped).
// Thread safety: const methods, safe to call concurrently on one object.
class RsaOaepDecryptOpenSsl final : public PublicKeyDecrypt {
 public:
  // New takes `alg` kRsa2048Oaep or kRsa3072Oaep and a PKCS#8 private key (DER or PEM).
  // Errors: InvalidArgument for another algorithm or an unparsable key;
  // FailedPrecondition for a key of another family or modulus size.
  static absl::StatusOr<std::unique_ptr<RsaOaepDecryptOpenSsl>> New(
      Algorithm alg, absl::string_view private_key);

  absl::StatusOr<std::string> Decrypt(absl::string_view ciphertext) const override;

 private:
  RsaOaepDecryptOpenSsl(Algorithm alg, SslUniquePtr<EVP_PKEY> key)
      : alg_(alg), key_(std::move(key)) {}

  const Algorithm alg_;
  SslUniquePtr<EVP_PKEY> key_;
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_RSA_OAEP_DECRYPT_OPENSSL_H_
