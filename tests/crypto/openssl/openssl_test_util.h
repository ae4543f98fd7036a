// openssl_test_util.h — helpers for the crypto/openssl tests: OpenSSL used directly,
// outside smcrypt's wrappers, as the reference the wrappers are checked against.
#ifndef SMCRYPT_TESTS_CRYPTO_OPENSSL_OPENSSL_TEST_UTIL_H_
#define SMCRYPT_TESTS_CRYPTO_OPENSSL_OPENSSL_TEST_UTIL_H_

#include <string>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/secret_data.h"

namespace smcrypt::testing {

// IsOkAndHolds(matcher): a StatusOr that is OK and whose value matches.
MATCHER_P(IsOkAndHolds, value_matcher, "is OK and holds a matching value") {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

inline const unsigned char* U8(absl::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// RefPublicKey parses SubjectPublicKeyInfo DER with OpenSSL directly.
inline SslUniquePtr<EVP_PKEY> RefPublicKey(absl::string_view spki) {
  const unsigned char* p = U8(spki);
  SslUniquePtr<EVP_PKEY> key(d2i_PUBKEY(nullptr, &p, static_cast<long>(spki.size())));
  EXPECT_NE(key, nullptr);
  return key;
}

// RefPrivateKey parses PKCS#8 DER with OpenSSL directly.
inline SslUniquePtr<EVP_PKEY> RefPrivateKey(const SecretData& pkcs8) {
  const unsigned char* p = pkcs8.data();
  SslUniquePtr<EVP_PKEY> key(d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(pkcs8.size())));
  EXPECT_NE(key, nullptr);
  return key;
}

// RefPkcs8 / RefSpki write keys with OpenSSL directly.
inline std::string RefPkcs8(EVP_PKEY* key) {
  SslUniquePtr<PKCS8_PRIV_KEY_INFO> p8(EVP_PKEY2PKCS8(key));
  unsigned char* buf = nullptr;
  int len = i2d_PKCS8_PRIV_KEY_INFO(p8.get(), &buf);
  std::string out(reinterpret_cast<char*>(buf), len);
  OPENSSL_clear_free(buf, len);
  return out;
}
inline std::string RefSpki(EVP_PKEY* key) {
  unsigned char* buf = nullptr;
  int len = i2d_PUBKEY(key, &buf);
  std::string out(reinterpret_cast<char*>(buf), len);
  OPENSSL_free(buf);
  return out;
}

// RefPem writes a private (PKCS#8) or public (SPKI) key as PEM.
inline std::string RefPem(EVP_PKEY* key, bool private_key) {
  SslUniquePtr<BIO> bio(BIO_new(BIO_s_mem()));
  if (private_key) {
    EXPECT_EQ(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr), 1);
  } else {
    EXPECT_EQ(PEM_write_bio_PUBKEY(bio.get(), key), 1);
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, len);
}

inline absl::string_view View(const SecretData& s) {
  return absl::string_view(reinterpret_cast<const char*>(s.data()), s.size());
}

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_CRYPTO_OPENSSL_OPENSSL_TEST_UTIL_H_
