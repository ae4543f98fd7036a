// backends.h — how every algorithm chooses its back end, and how it names the choice.
//
// Each algorithm (SM2's field arithmetic, SM3's single-stream and multi-buffer CF, SM4,
// GHASH) keeps a const table of back ends in priority order, each entry paired with its
// capability predicate, after BoringSSL's `*_capable()` functions; the first entry whose
// predicate holds for GetCpuFeatures() and GetCpuIdentity() is chosen once, in a
// function-local static, and kept for the life of the process.
//
// A predicate holds only if the CPU has the back end's required features (each
// algorithm's dispatch test checks this with every feature masked). Where an interleaved
// bench run (bench.sh --check-dispatch) shows an entry lower in the table faster on some
// CPU, the predicate of the entry above also tests that CPU's vendor, family and model,
// and the comment beside it cites the run. Nothing is timed at run time: on a noisy host
// a calibration would choose differently from one start to the next.
#ifndef SMCRYPT_CRYPTO_CPU_BACKENDS_H_
#define SMCRYPT_CRYPTO_CPU_BACKENDS_H_

#include <cstddef>
#include <cstdint>

#include "smcrypt/cpu.h"

namespace smcrypt::internal {

// Defined in crypto/sm3/, crypto/sm4/ and crypto/sm2/ respectively.
const char* Sm3ActiveKernelName();
const char* Sm4ActiveKernelName();
const char* Sm2ActiveKernelName();

// HasFeatures reports whether every bit of `required` is in `available`.
inline bool HasFeatures(uint32_t available, uint32_t required) {
  return (available & required) == required;
}

// BackendChoice is one entry of a dispatch table: a back end and its capability
// predicate (features after SMCRYPT_CPU_DISABLE, and the CPU's identity).
template <typename Kernels>
struct BackendChoice {
  const Kernels* kernels;
  bool (*capable)(uint32_t features, const CpuIdentity& cpu);
};

// HasRequiredFeatures<&k> is the predicate of a back end that has no CPU-specific
// preference: the CPU has k.required_features.
template <const auto* K>
bool HasRequiredFeatures(uint32_t features, const CpuIdentity& /*cpu*/) {
  return HasFeatures(features, K->required_features);
}

// FirstCapable returns the kernels of the first of the `n` entries at `table` whose
// predicate holds, or null.
template <typename Kernels>
const Kernels* FirstCapable(const BackendChoice<Kernels>* table, size_t n, uint32_t features,
                            const CpuIdentity& cpu) {
  for (size_t i = 0; i < n; ++i) {
    if (table[i].kernels != nullptr && table[i].capable(features, cpu)) return table[i].kernels;
  }
  return nullptr;
}

}  // namespace smcrypt::internal

#endif  // SMCRYPT_CRYPTO_CPU_BACKENDS_H_
