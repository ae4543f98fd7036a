// ghash.h — GHASH, the universal hash of GCM (NIST SP 800-38D §6.4), as a small table
// of back ends chosen once per process.
//
// GHASH_H(X_1 ‖ … ‖ X_m) = Y_m with Y_0 = 0 and Y_i = (Y_{i−1} ⊕ X_i) · H in GF(2^128)
// modulo x^128 + x^7 + x^2 + x + 1, in GCM's bit order: bit 0 of a 16-byte block (the
// most significant bit of byte 0) is the coefficient of x^0 (SP 800-38D §6.3).
//
// H = E(K, 0^128) and the hashed data are both secret: every back end is constant time
// (no branch and no memory index depends on H, the state or the data).
//
// Back ends, in priority order (the first whose CPU features are present wins; the
// tables are ghash_table_<arch>.cc, the choice is in sm4_gcm.cc):
//   vpclmulqdq_avx512 — x86-64: VPCLMULQDQ on zmm, 16 blocks per reduction (ghash_clmul.cc);
//   pclmul_avx — x86-64: PCLMULQDQ on xmm, 4 blocks per reduction (ghash_clmul.cc);
//   pmull — arm64: PMULL/PMULL2, 8 blocks per reduction (ghash_pmull.cc);
//   generic — portable C++, 64-bit integer multiplies with holes (ghash_generic.cc).
// GhashKey holds the powers of H (up to H^16) that the carry-less back ends aggregate with.
#ifndef SMCRYPT_CRYPTO_SM4_GHASH_H_
#define SMCRYPT_CRYPTO_SM4_GHASH_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "crypto/cpu/backends.h"

namespace smcrypt::internal {

inline constexpr size_t kGhashBlockSize = 16;  // bytes
inline constexpr size_t kGhashMaxPowers = 16;  // H^1 … H^16, for wide back ends

// GhashKey is a back end's precomputed form of H. Each back end defines the layout of
// `words`; the generic one keeps H only, as two big-endian 64-bit halves in words[0..1].
// Destruction wipes it.
struct GhashKey {
  alignas(64) uint64_t words[2 * kGhashMaxPowers] = {};
  GhashKey() = default;
  GhashKey(const GhashKey&) = default;
  GhashKey& operator=(const GhashKey&) = default;
  ~GhashKey();
};

// GhashKernels is one GHASH back end.
//   init(key, h): fills `key` from the 16-byte hash subkey `h` = E(K, 0^128).
//   update(y, key, data, num_blocks): y ← GHASH step over `num_blocks` 16-byte blocks
//     of `data`, i.e. for each block X: y ← (y ⊕ X) · H. `y` is the 16-byte state in
//     GCM's byte order. `data` may be unaligned; num_blocks may be 0.
// Both are constant time.
struct GhashKernels {
  const char* name;            // "generic", … (the metric label and test name)
  uint32_t required_features;  // CpuFeature bits
  void (*init)(GhashKey* key, const uint8_t h[kGhashBlockSize]);
  void (*update)(uint8_t y[kGhashBlockSize], const GhashKey& key, const uint8_t* data,
                 size_t num_blocks);
};

// GhashActiveKernels returns the back end chosen from GetCpuFeatures(), once, thread-safe.
const GhashKernels& GhashActiveKernels();

// GhashAllKernelsForTesting returns every compiled back end, supported here or not,
// in priority order (generic last). Callers check required_features themselves.
absl::Span<const GhashKernels* const> GhashAllKernelsForTesting();

// GhashDispatchTableForTesting returns the dispatch table: the same back ends in the
// same order, with their capability predicates (crypto/cpu/backends.h).
absl::Span<const BackendChoice<GhashKernels>> GhashDispatchTableForTesting();

// GhashSetKernelsForTesting makes GhashActiveKernels() return `k` (which must outlive
// its use) until called again; nullptr restores the dispatched choice. An Sm4Gcm object
// keeps the GHASH back end that was active when it was created (its GhashKey is in
// that back end's layout). For tests and the benchmark harness.
void GhashSetKernelsForTesting(const GhashKernels* k);

// kGhashGeneric is the portable, constant-time reference back end (ghash_generic.cc).
extern const GhashKernels kGhashGeneric;

// Carry-less multiply back ends (ghash_clmul.cc, x86-64 builds only): VPCLMULQDQ on zmm
// with 16-block aggregated reduction, and PCLMULQDQ on xmm with 4-block aggregated
// reduction.
extern const GhashKernels kGhashVpclmulAvx512;
extern const GhashKernels kGhashPclmulAvx;

// GhashDispatchTable returns this architecture's back ends in priority order, generic
// last: ghash_table_x86_64.cc or ghash_table_aarch64.cc, whichever crypto/CMakeLists.txt
// compiles for CMAKE_SYSTEM_PROCESSOR.
absl::Span<const BackendChoice<GhashKernels>> GhashDispatchTable();

// PMULL/PMULL2 back end (ghash_pmull.cc, aarch64 builds only), Karatsuba with 8-block
// aggregated reduction.
extern const GhashKernels kGhashPmull;

}  // namespace smcrypt::internal

#endif  // SMCRYPT_CRYPTO_SM4_GHASH_H_
