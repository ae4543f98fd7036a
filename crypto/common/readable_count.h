// readable_count.h — byte counts and limits as a person reads them in error messages.
//
// Internal header (crypto/ and server/); not part of the public API.
#ifndef SMCRYPT_CRYPTO_COMMON_READABLE_COUNT_H_
#define SMCRYPT_CRYPTO_COMMON_READABLE_COUNT_H_

#include <cstdint>
#include <string>

namespace smcrypt {

// ReadableCount writes `n` in decimal below 2^32 ("65535", "4294967295"); from 2^32 on,
// as a power of two plus or minus at most 65536 when it is one ("2^32", "2^36 - 32",
// "2^61 - 1", "2^64 - 1"), else in decimal. For limits such as GCM's 2^61 - 1 bytes,
// which read as noise in decimal (2305843009213693951).
std::string ReadableCount(uint64_t n);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_COMMON_READABLE_COUNT_H_
