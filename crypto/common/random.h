// random.h — the CSPRNG, declared in the public smcrypt/random.h (RandomBytes,
// RandomString); this internal name is kept for crypto/'s own includes.
#ifndef SMCRYPT_CRYPTO_COMMON_RANDOM_H_
#define SMCRYPT_CRYPTO_COMMON_RANDOM_H_

#include "smcrypt/random.h"

#endif  // SMCRYPT_CRYPTO_COMMON_RANDOM_H_
