#include "crypto/openssl/hmac_openssl.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {

absl::StatusOr<std::unique_ptr<HmacOpenSsl>> HmacOpenSsl::New(absl::string_view key) {
  SMCRYPT_ASSIGN_OR_RETURN(EVP_MAC * mac, FetchedHmac());
  SslUniquePtr<EVP_MAC_CTX> ctx(EVP_MAC_CTX_new(mac));
  if (ctx == nullptr) return SslInternalError("EVP_MAC_CTX_new(HMAC)");
  char digest[] = "SHA2-256";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  // EVP_MAC_init reads a null key as "keep the current key", so the empty key is passed
  // as a valid pointer with length 0.
  static const unsigned char kEmptyKey[1] = {0};
  const unsigned char* key_bytes =
      key.empty() ? kEmptyKey : reinterpret_cast<const unsigned char*>(key.data());
  if (EVP_MAC_init(ctx.get(), key_bytes, key.size(), params) != 1) {
    return SslInternalError("EVP_MAC_init(HMAC-SHA-256)");
  }
  return std::unique_ptr<HmacOpenSsl>(new HmacOpenSsl(std::move(ctx)));
}

absl::StatusOr<std::string> HmacOpenSsl::ComputeMac(absl::string_view data) const {
  SslUniquePtr<EVP_MAC_CTX> ctx(EVP_MAC_CTX_dup(keyed_.get()));
  if (ctx == nullptr) return SslInternalError("EVP_MAC_CTX_dup(HMAC-SHA-256)");
  std::string out(kSha256DigestSize, '\0');
  size_t len = 0;
  if (EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(data.data()),
                     data.size()) != 1 ||
      EVP_MAC_final(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len,
                    out.size()) != 1 ||
      len != kSha256DigestSize) {
    return SslInternalError("HMAC-SHA-256");
  }
  return out;
}

absl::Status HmacOpenSsl::VerifyMac(absl::string_view mac, absl::string_view data) const {
  SMCRYPT_ASSIGN_OR_RETURN(std::string expected, ComputeMac(data));
  // The length is public; the contents are compared in constant time.
  if (mac.size() != expected.size() ||
      CRYPTO_memcmp(mac.data(), expected.data(), expected.size()) != 0) {
    return absl::InvalidArgumentError("MAC verification failed");
  }
  return absl::OkStatus();
}

size_t HmacOpenSsl::mac_size() const { return kSha256DigestSize; }

}  // namespace smcrypt
