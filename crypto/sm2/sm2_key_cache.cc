// sm2_key_cache.cc — lazily built per-key comb tables for SM2 public keys. See
// sm2_key_cache.h.
//
// Constant-time review: the table is built from the public key only; encryption reads it
// with the constant-time comb (masked full-row selects), verification (public data) with
// the variable-time one.
#include "crypto/sm2/sm2_key_cache.h"

#include <memory>
#include <vector>

#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_point.h"

namespace smcrypt {

Sm2PublicKeyCache::~Sm2PublicKeyCache() { delete table_.load(std::memory_order_acquire); }

const internal::Sm2PointTable* Sm2PublicKeyCache::Table() const {
  const internal::Sm2PointTable* t = table_.load(std::memory_order_acquire);
  if (t != nullptr) return t;
  const uint32_t n = uses_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n != kBuildAfterUses) return nullptr;  // only the kBuildAfterUses-th caller builds
  const internal::Sm2Kernels& k = internal::Sm2ActiveKernels();
  internal::Sm2Affine p;
  internal::Sm2PublicKeyToAffine(k, key_, &p);
  std::unique_ptr<internal::Sm2PointTable> built = internal::Sm2PointTable::Build(k, p);
  t = built.release();
  table_.store(t, std::memory_order_release);
  return t;
}

absl::Status Sm2VerifyDigestCached(const Sm2PublicKeyCache& cache, absl::string_view e,
                                   absl::string_view signature) {
  return internal::Sm2VerifyDigestCore(cache.key(), e, signature, cache.Table());
}

absl::StatusOr<std::string> Sm2EncryptCached(const Sm2PublicKeyCache& cache,
                                             absl::string_view message,
                                             Sm2CiphertextFormat format, bool compress_c1) {
  return internal::Sm2EncryptCore(cache.key(), message, format, compress_c1,
                                  internal::Sm2RandomNonce, cache.Table());
}

void Sm2EncryptManyCached(const Sm2PublicKeyCache& cache,
                          absl::Span<const absl::string_view> messages,
                          absl::Span<absl::StatusOr<std::string>> out,
                          Sm2CiphertextFormat format, bool compress_c1) {
  const size_t n = messages.size();
  std::vector<size_t> index;  // items whose size is valid, in order
  index.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    absl::Status s = internal::CheckSm2MessageSize(messages[i].size());
    if (s.ok()) {
      index.push_back(i);
    } else {
      out[i] = s;
    }
  }
  if (index.empty()) return;
  std::unique_ptr<internal::Sm2EphemeralDh[]> eph(new internal::Sm2EphemeralDh[index.size()]);
  absl::Status s = internal::Sm2EphemeralDhBatch(cache, absl::MakeSpan(eph.get(), index.size()));
  for (size_t j = 0; j < index.size(); ++j) {
    const size_t i = index[j];
    if (!s.ok()) {
      out[i] = s;
      continue;
    }
    std::string ct;
    if (internal::Sm2EncryptFromEphemeral(eph[j], messages[i], format, compress_c1, &ct)) {
      out[i] = internal::Sm2FinishCiphertext(std::move(ct), format);
    } else {
      out[i] = Sm2EncryptCached(cache, messages[i], format, compress_c1);  // A5: a new k
    }
  }
}

}  // namespace smcrypt
