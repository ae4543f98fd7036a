// sm2_internal.h — the SM2 signing and encryption cores with an injectable nonce source,
// and access to private-key internals. Not part of the public API.
//
// The public entry points (Sm2SignDigest, Sm2Encrypt) call these cores with a source that
// draws k uniformly from [1, n − 1] with the CSPRNG. The only other caller is
// crypto/sm2/sm2_testing.cc, which passes a fixed k for the GB/T 32918.5 examples; that
// file is built into the test-only library smcrypt_testing, never into libsmcrypt, so no
// production code path can choose k.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_INTERNAL_H_
#define SMCRYPT_CRYPTO_SM2_SM2_INTERNAL_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/sm2/sm2_point.h"
#include "smcrypt/secret_data.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm2_key_exchange.h"

namespace smcrypt {

// Sm2PrivateKeyAccess exposes the stored scalars (32 big-endian bytes each).
struct Sm2PrivateKeyAccess {
  static const SecretData& d(const Sm2PrivateKey& key) { return key.d_; }
  // (1 + d)⁻¹·2^256 mod n: (1 + d)⁻¹ in Montgomery form mod n (see ScMontMul).
  static const SecretData& d1_inv_mont(const Sm2PrivateKey& key) { return key.d1_inv_; }
};

// Sm2KeyExchangeAccess starts an exchange with a given ephemeral scalar r (plain
// little-endian limbs, wiped; InvalidArgument when r ∉ [1, n − 1]). Its only caller is
// crypto/sm2/sm2_testing.cc (known-answer and differential tests).
struct Sm2KeyExchangeAccess {
  static absl::StatusOr<std::string> StartWithScalar(Sm2KeyExchange& kx, uint64_t r[4]) {
    return kx.StartWithScalar(r);
  }
};

namespace internal {

// Sm2NonceSource writes one candidate k (plain little-endian limbs) per call. The cores
// call it again whenever the standard says to choose a new k. A candidate outside
// [1, n − 1] makes the core fail with InvalidArgument.
using Sm2NonceSource = absl::FunctionRef<absl::Status(uint64_t k[4])>;

// Sm2RandomNonce draws k uniformly from [1, n − 1] (rejection sampling on 32 random bytes).
absl::Status Sm2RandomNonce(uint64_t k[4]);

// Sm2SignDigestCore: GB/T 32918.2 §6.1 A3–A7 over the 32-byte digest e; raw r ‖ s.
absl::StatusOr<std::string> Sm2SignDigestCore(const Sm2PrivateKey& key, absl::string_view e,
                                              Sm2NonceSource next_k);

// Sm2EncryptCore: GB/T 32918.4 §6.1 A1–A8. With `table` (the comb table of the
// recipient's key), [k]P_B is a constant-time comb over it instead of the fixed-window
// variable-base multiplication.
absl::StatusOr<std::string> Sm2EncryptCore(const Sm2PublicKey& key, absl::string_view message,
                                           Sm2CiphertextFormat format, bool compress_c1,
                                           Sm2NonceSource next_k,
                                           const Sm2PointTable* table = nullptr);

struct Sm2EphemeralDh;

// Sm2EncryptFromEphemeral is §6.1 A5–A7 for one message with the ephemeral agreement
// `eph` (C1 = k·G, x2 ‖ y2 = k·P_B): *out = C1 ‖ C3 ‖ C2 (C1 ‖ C2 ‖ C3 for kC1C2C3;
// kDer gives C1C3C2, for Sm2FinishCiphertext). Returns false, with *out empty, when t is
// all zero (A5: the caller draws a new k). No size check (CheckSm2MessageSize).
bool Sm2EncryptFromEphemeral(const Sm2EphemeralDh& eph, absl::string_view message,
                             Sm2CiphertextFormat format, bool compress_c1, std::string* out);
// CheckSm2MessageSize: InvalidArgument above the KDF's 32-bit counter range.
absl::Status CheckSm2MessageSize(size_t size);
// Sm2FinishCiphertext converts C1C3C2 to DER for kDer; other formats pass through.
absl::StatusOr<std::string> Sm2FinishCiphertext(std::string ciphertext,
                                                Sm2CiphertextFormat format);

// Sm2VerifyDigestCore: GB/T 32918.2 §7.1 B1–B7 over the 32-byte digest e, with the
// key's comb table when given. Errors as Sm2VerifyDigest.
absl::Status Sm2VerifyDigestCore(const Sm2PublicKey& key, absl::string_view e,
                                 absl::string_view signature, const Sm2PointTable* table);

// Sm2VerifyFinalCheck is GB/T 32918.2 §7.1 B7 on sum = [s]G + [t]P_A in Jacobian form
// (no inversion): OK iff (e + x(sum)) mod n = r, for r and e plain limbs with e < n;
// Unauthenticated("signature invalid") otherwise or when sum is the point at infinity.
// Variable time (public data).
absl::Status Sm2VerifyFinalCheck(const Sm2Kernels& kern, const Sm2Jacobian& sum,
                                 const uint64_t r[4], const uint64_t e[4]);

// Sm2InPrivateRange returns ~0 if 1 ≤ d ≤ n − 2 (GB/T 32918.1 §6.1: the range of an SM2
// private key; d plain limbs), else 0. Constant time.
uint64_t Sm2InPrivateRange(const uint64_t d[4]);

// Sm2PointFromBytes is Sm2PublicKey::FromPoint for a point that is not a public key (an
// SM2 ciphertext's C1): its errors name `name` where FromPoint's say "SM2 public key"
// ("SM2 ciphertext: C1: point not on the curve").
// (Declared in smcrypt/sm2.h, as Sm2PublicKey's friend.)

// Sm2PublicKeyToAffine loads the (already validated) public point in Montgomery form.
void Sm2PublicKeyToAffine(const Sm2Kernels& k, const Sm2PublicKey& key, Sm2Affine* out);

}  // namespace internal
}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_SM2_SM2_INTERNAL_H_
