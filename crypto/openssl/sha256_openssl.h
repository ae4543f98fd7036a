// sha256_openssl.h — SHA-256 (FIPS 180-4 §6.2) through OpenSSL 3 EVP.
#ifndef SMCRYPT_CRYPTO_OPENSSL_SHA256_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_SHA256_OPENSSL_H_

#include <cstddef>
#include <memory>
#include <string>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/primitives/hash.h"

namespace smcrypt {

// Sha256OpenSsl is one incremental SHA-256 computation: any split of the input into
// Update calls gives the digest of the concatenation. Finish returns the 32-byte digest
// and resets to the empty-message state. Not thread-safe (one object per thread).
class Sha256OpenSsl final : public Hash {
 public:
  // New fails with Internal only when OpenSSL cannot provide SHA-256.
  static absl::StatusOr<std::unique_ptr<Sha256OpenSsl>> New();

  void Update(absl::string_view data) override;
  std::string Finish() override;
  size_t digest_size() const override;
  size_t block_size() const override;

 private:
  explicit Sha256OpenSsl(SslUniquePtr<EVP_MD_CTX> ctx) : ctx_(std::move(ctx)) {}
  SslUniquePtr<EVP_MD_CTX> ctx_;
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_SHA256_OPENSSL_H_
