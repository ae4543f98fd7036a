// secure_zero.h — wiping secrets so the compiler cannot drop the stores.
#ifndef SMCRYPT_SECURE_ZERO_H_
#define SMCRYPT_SECURE_ZERO_H_

#include <cstddef>

namespace smcrypt {

// SecureZero overwrites `len` bytes at `p` with zeros. The write is never elided,
// even when `p` is dead afterwards. `p` may be null when `len` is 0.
void SecureZero(void* p, size_t len);

}  // namespace smcrypt

#endif  // SMCRYPT_SECURE_ZERO_H_
