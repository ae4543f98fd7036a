// random.h — the CSPRNG every part of smcrypt draws from (OpenSSL's RAND_bytes, a
// NIST SP 800-90A CTR-DRBG seeded by the operating system).
#ifndef SMCRYPT_CRYPTO_COMMON_RANDOM_H_
#define SMCRYPT_CRYPTO_COMMON_RANDOM_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace smcrypt {

// RandomBytes fills `out[0 .. len)` with cryptographically secure random bytes.
// Errors: Internal when the generator fails (e.g. it cannot be seeded). Thread-safe.
absl::Status RandomBytes(uint8_t* out, size_t len);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_COMMON_RANDOM_H_
