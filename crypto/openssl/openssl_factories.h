// openssl_factories.h — the registry's include for the OpenSSL back end; the
// declarations live in openssl_primitives.h.
#ifndef SMCRYPT_CRYPTO_OPENSSL_OPENSSL_FACTORIES_H_
#define SMCRYPT_CRYPTO_OPENSSL_OPENSSL_FACTORIES_H_

#include "crypto/openssl/openssl_primitives.h"  // IWYU pragma: export

#endif  // SMCRYPT_CRYPTO_OPENSSL_OPENSSL_FACTORIES_H_
