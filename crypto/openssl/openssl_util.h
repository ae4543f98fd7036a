// openssl_util.h — algorithm objects fetched once from OpenSSL 3's default provider.
//
// Internal header (crypto/openssl only). OpenSSL 3 fetched EVP_MD / EVP_MAC /
// EVP_CIPHER objects are immutable and safe to share between threads; fetching them
// once avoids a locked provider lookup on every call. The objects live until the
// process exits.
#ifndef SMCRYPT_CRYPTO_OPENSSL_OPENSSL_UTIL_H_
#define SMCRYPT_CRYPTO_OPENSSL_OPENSSL_UTIL_H_

#include <cstddef>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/algorithm.h"

namespace smcrypt {

inline constexpr size_t kSha256DigestSize = 32;  // bytes (FIPS 180-4 §1)
inline constexpr size_t kSha256BlockSize = 64;   // bytes
inline constexpr size_t kAesBlockSize = 16;      // bytes (FIPS 197)

// FetchedSha256 returns SHA-256, or Internal with OpenSSL's errors when the provider
// does not offer it.
absl::StatusOr<EVP_MD*> FetchedSha256();
// FetchedHmac returns the HMAC EVP_MAC.
absl::StatusOr<EVP_MAC*> FetchedHmac();
// FetchedCipher returns one of "AES-128-ECB", "AES-128-CBC", "AES-128-CTR",
// "AES-128-GCM" and the AES-256 counterparts. Any other name is Internal.
absl::StatusOr<EVP_CIPHER*> FetchedCipher(const char* name);

// OpenSslAlgorithmName returns the canonical name (docs/design.md, "Names used everywhere")
// of the algorithms served here, for error messages, and "algorithm #<n>" for others.
// (crypto/openssl does not link the core's AlgorithmName: the core depends on it.)
absl::string_view OpenSslAlgorithmName(Algorithm alg);

// kMaxSslChunk bounds the length passed to OpenSSL calls that take an `int` length, so
// inputs of any size_t length are processed in pieces.
inline constexpr size_t kMaxSslChunk = size_t{1} << 30;

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_OPENSSL_UTIL_H_
