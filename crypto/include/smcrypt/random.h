// random.h — the CSPRNG every part of smcrypt draws from (OpenSSL's RAND_bytes, a
// NIST SP 800-90A CTR-DRBG seeded by the operating system): keys, nonces, IVs.
#ifndef SMCRYPT_RANDOM_H_
#define SMCRYPT_RANDOM_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace smcrypt {

// RandomBytes fills `out[0 .. len)` with cryptographically secure random bytes.
// Errors: Internal when the generator fails (e.g. it cannot be seeded). Thread-safe.
absl::Status RandomBytes(uint8_t* out, size_t len);

// RandomString returns `len` random bytes (empty for 0): a fresh nonce or IV of the size
// a primitive asks for (Aead::nonce_size, Cipher::iv_size). Errors: RandomBytes'.
// Thread-safe.
absl::StatusOr<std::string> RandomString(size_t len);

}  // namespace smcrypt

#endif  // SMCRYPT_RANDOM_H_
