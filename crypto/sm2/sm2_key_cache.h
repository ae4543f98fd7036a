// sm2_key_cache.h — per-key precomputation for SM2 public keys used repeatedly
// (verification and encryption objects built once per key, e.g. from the keyring).
//
// Internal header (crypto/core and tests). Not part of the public API.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_KEY_CACHE_H_
#define SMCRYPT_CRYPTO_SM2_SM2_KEY_CACHE_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "smcrypt/sm2.h"

namespace smcrypt {

namespace internal {
class Sm2PointTable;
}  // namespace internal

// Sm2PublicKeyCache holds a public key's comb table (52 × 16 affine points, 53,248
// bytes; sm2_point.h), built lazily: the first kBuildAfterUses − 1 operations run
// without it (a key used once or twice, e.g. an inline key in one request, never pays
// for it), the kBuildAfterUses-th builds it (about 40 verifications' worth of work) and
// every later operation uses it: verification then needs no doublings for t·P_A and
// encryption computes [k]P_B as a constant-time comb.
//
// Thread-safe: exactly one caller builds the table; it is published with an atomic
// pointer and freed with the cache. The table holds public data only.
class Sm2PublicKeyCache {
 public:
  static constexpr uint32_t kBuildAfterUses = 8;

  explicit Sm2PublicKeyCache(const Sm2PublicKey& key) : key_(key) {}
  ~Sm2PublicKeyCache();
  Sm2PublicKeyCache(const Sm2PublicKeyCache&) = delete;
  Sm2PublicKeyCache& operator=(const Sm2PublicKeyCache&) = delete;

  const Sm2PublicKey& key() const { return key_; }
  // Table counts one use and returns the table, or nullptr while it is not built.
  const internal::Sm2PointTable* Table() const;

 private:
  Sm2PublicKey key_;
  mutable std::atomic<uint32_t> uses_{0};
  mutable std::atomic<const internal::Sm2PointTable*> table_{nullptr};
};

// Sm2VerifyDigestCached is Sm2VerifyDigest (GB/T 32918.2 §7.1) with the key's cache;
// same results and errors.
absl::Status Sm2VerifyDigestCached(const Sm2PublicKeyCache& cache, absl::string_view e,
                                   absl::string_view signature);

// Sm2EncryptCached is Sm2Encrypt (GB/T 32918.4 §6.1) with the key's cache; same
// results and errors.
absl::StatusOr<std::string> Sm2EncryptCached(
    const Sm2PublicKeyCache& cache, absl::string_view message,
    Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2, bool compress_c1 = false);

// Sm2EncryptManyCached sets out[i] to Sm2EncryptCached(cache, messages[i], format,
// compress_c1) (spans of one length), each with its own fresh k: the k·G and k·P_B of
// all messages go through Sm2EphemeralDhBatch (8 at a time in AVX-512 IFMA lanes, one
// inversion for the batch; crypto/sm2/sm2_batch.h), then each message's KDF, C2 and C3
// as in §6.1 A5–A8. A message whose t is all zero (A5) is encrypted again on its own.
// Constant time in k, (x2, y2) and the messages. Errors per item as Sm2EncryptCached;
// a nonce-source error is every item's.
void Sm2EncryptManyCached(const Sm2PublicKeyCache& cache,
                          absl::Span<const absl::string_view> messages,
                          absl::Span<absl::StatusOr<std::string>> out,
                          Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2,
                          bool compress_c1 = false);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_SM2_SM2_KEY_CACHE_H_
