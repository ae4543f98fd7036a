// hmac_openssl.h — HMAC-SHA-256 (RFC 2104, FIPS 198-1; test vectors RFC 4231) through
// OpenSSL 3's EVP_MAC.
#ifndef SMCRYPT_CRYPTO_OPENSSL_HMAC_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_HMAC_OPENSSL_H_

#include <cstddef>
#include <memory>
#include <string>

#include <openssl/evp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/primitives/hash.h"

namespace smcrypt {

// HmacOpenSsl computes and verifies 32-byte HMAC-SHA-256 tags under one key. The key
// is absorbed once into a keyed template context (OpenSSL keeps the ipad/opad states,
// not the key); each call works on a copy, so const methods are safe to call
// concurrently. VerifyMac compares with CRYPTO_memcmp (constant time) and returns
// InvalidArgument "MAC verification failed" for a wrong or wrong-length MAC.
class HmacOpenSsl final : public Mac {
 public:
  // New takes a key of any length, the empty key included (RFC 2104 §2 sets no lower
  // bound; longer than 64 bytes is hashed first). Errors: Internal when OpenSSL fails.
  static absl::StatusOr<std::unique_ptr<HmacOpenSsl>> New(absl::string_view key);

  absl::StatusOr<std::string> ComputeMac(absl::string_view data) const override;
  absl::Status VerifyMac(absl::string_view mac, absl::string_view data) const override;
  size_t mac_size() const override;

 private:
  explicit HmacOpenSsl(SslUniquePtr<EVP_MAC_CTX> keyed) : keyed_(std::move(keyed)) {}
  SslUniquePtr<EVP_MAC_CTX> keyed_;  // initialized with the key; only ever duplicated
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_HMAC_OPENSSL_H_
