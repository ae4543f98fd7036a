// sm2_testing.h — test-only SM2 entry points that take a caller-chosen nonce k, for the
// known-answer examples of GB/T 32918.5-2017 (which fix k).
//
// These are defined in sm2_testing.cc, which the build puts into the test library
// smcrypt_testing only; libsmcrypt (smcrypt_core) does not contain them, so production
// code cannot sign or encrypt with a chosen k. Never use them outside tests: reusing k
// reveals the private key.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_TESTING_H_
#define SMCRYPT_CRYPTO_SM2_SM2_TESTING_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/sm2.h"

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

}  // namespace smcrypt::testing

#endif  // SMCRYPT_CRYPTO_SM2_SM2_TESTING_H_
