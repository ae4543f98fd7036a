// ssl_unique_ptr.h — std::unique_ptr for OpenSSL objects, one deleter per type.
//
// Internal header (crypto/openssl only). SslUniquePtr<EVP_PKEY> frees with
// EVP_PKEY_free, and so on; BIGNUMs are freed with BN_clear_free so that private
// scalars never stay in freed memory. Every OpenSSL object smcrypt creates is held
// by one of these from the line that creates it.
#ifndef SMCRYPT_CRYPTO_OPENSSL_SSL_UNIQUE_PTR_H_
#define SMCRYPT_CRYPTO_OPENSSL_SSL_UNIQUE_PTR_H_

#include <memory>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/x509.h>

namespace smcrypt {

// SslDeleter<T> frees a T with the OpenSSL function made for it. Only the
// specializations below exist, so a missing one is a compile error.
template <typename T>
struct SslDeleter;

#define SMCRYPT_SSL_DELETER_(type, free_fn)                    \
  template <>                                                  \
  struct SslDeleter<type> {                                    \
    void operator()(type* p) const { free_fn(p); }             \
  }

SMCRYPT_SSL_DELETER_(BIO, BIO_free);
SMCRYPT_SSL_DELETER_(BIGNUM, BN_clear_free);
SMCRYPT_SSL_DELETER_(BN_CTX, BN_CTX_free);
SMCRYPT_SSL_DELETER_(EC_GROUP, EC_GROUP_free);
SMCRYPT_SSL_DELETER_(EC_POINT, EC_POINT_clear_free);
SMCRYPT_SSL_DELETER_(ECDSA_SIG, ECDSA_SIG_free);
SMCRYPT_SSL_DELETER_(EVP_CIPHER, EVP_CIPHER_free);
SMCRYPT_SSL_DELETER_(EVP_CIPHER_CTX, EVP_CIPHER_CTX_free);
SMCRYPT_SSL_DELETER_(EVP_MAC, EVP_MAC_free);
SMCRYPT_SSL_DELETER_(EVP_MAC_CTX, EVP_MAC_CTX_free);
SMCRYPT_SSL_DELETER_(EVP_MD, EVP_MD_free);
SMCRYPT_SSL_DELETER_(EVP_MD_CTX, EVP_MD_CTX_free);
SMCRYPT_SSL_DELETER_(EVP_PKEY, EVP_PKEY_free);
SMCRYPT_SSL_DELETER_(EVP_PKEY_CTX, EVP_PKEY_CTX_free);
SMCRYPT_SSL_DELETER_(OSSL_PARAM, OSSL_PARAM_free);
SMCRYPT_SSL_DELETER_(OSSL_PARAM_BLD, OSSL_PARAM_BLD_free);
SMCRYPT_SSL_DELETER_(PKCS8_PRIV_KEY_INFO, PKCS8_PRIV_KEY_INFO_free);

#undef SMCRYPT_SSL_DELETER_

// SslUniquePtr<T> owns one OpenSSL object of type T.
template <typename T>
using SslUniquePtr = std::unique_ptr<T, SslDeleter<T>>;

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_SSL_UNIQUE_PTR_H_
