// sm2_testing.h — test-only SM2 entry points that take a caller-chosen nonce k, for the
// known-answer examples of GB/T 32918.5-2017 (which fix k), and a key exchange with a
// caller-chosen ephemeral scalar r.
//
// These are defined in sm2_testing.cc, which the build puts into the test library
// smcrypt_testing only; libsmcrypt (smcrypt_core) does not contain them, so production
// code cannot sign or encrypt with a chosen k, nor exchange keys with a chosen r. Never
// use them outside tests: reusing k (or r) reveals the private key.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_TESTING_H_
#define SMCRYPT_CRYPTO_SM2_SM2_TESTING_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm2_key_exchange.h"

namespace smcrypt::testing {

// Sm2SignDigestWithKForTesting is Sm2SignDigest with k given as 32 big-endian bytes.
// Errors: InvalidArgument for a wrong size, k ∉ [1, n − 1], or a k that §6.1 rejects
// (r = 0, r + k = n, s = 0), since no other k may be drawn.
absl::StatusOr<std::string> Sm2SignDigestWithKForTesting(const Sm2PrivateKey& key,
                                                         absl::string_view e,
                                                         absl::string_view k);

// Sm2EncryptWithKForTesting is Sm2Encrypt with k given as 32 big-endian bytes; errors as
// above (an all-zero KDF output rejects k).
absl::StatusOr<std::string> Sm2EncryptWithKForTesting(
    const Sm2PublicKey& key, absl::string_view message, absl::string_view k,
    Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2, bool compress_c1 = false);

// Sm2KeyExchangeStartWithRForTesting is Sm2KeyExchange::Start with the ephemeral scalar
// r given as 32 big-endian bytes (GB/T 32918.3 §6.1 A1/B1 fixed, for known answers and
// the BouncyCastle differential test). Errors: InvalidArgument for a wrong size or
// r ∉ [1, n − 1]; those of Start.
absl::StatusOr<std::string> Sm2KeyExchangeStartWithRForTesting(Sm2KeyExchange& kx,
                                                               absl::string_view r);

}  // namespace smcrypt::testing

#endif  // SMCRYPT_CRYPTO_SM2_SM2_TESTING_H_
