// sm3_mb8_avx2.cc — multi-buffer SM3: eight independent messages side by side in AVX2
// registers (GB/T 32905-2016 §5.3), with the compression of sm3_mb_impl.inc.
//
// Instructions: AVX2 (VPSLLD/VPSRLD/VPOR rotates, VPXOR/VPAND/VPANDN/VPOR for FF/GG, VPADDD,
// VPSHUFB for the byte order and for the rotate by 8 inside P1, VPUNPCK*/VPERM2I128 for
// the transpose). CPU features: kCpuAvx2 (which implies AVX with YMM state enabled).
// Technique: each step loads one 64-byte block per lane and transposes two 8×8 word
// matrices. Batch width: 8 messages.
// Constant time: as sm3_mb_impl.inc states (no table, no data-dependent branch or
// address; the expanded words are wiped).
#include <cstddef>
#include <cstdint>

#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/cpu.h"

#include <immintrin.h>

#define SM3_MB_TARGET __attribute__((target("avx2")))
#define SM3_MB_INLINE SM3_MB_TARGET inline __attribute__((always_inline))

namespace smcrypt {
namespace {

struct MbOps {
  using V = __m256i;
  static constexpr size_t kLanes = 8;
  static SM3_MB_INLINE V Load(const uint32_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  static SM3_MB_INLINE void Store(uint32_t* p, V v) { _mm256_store_si256(reinterpret_cast<__m256i*>(p), v); }
  static SM3_MB_INLINE V Zero() { return _mm256_setzero_si256(); }
  static SM3_MB_INLINE V Set1(uint32_t w) { return _mm256_set1_epi32(static_cast<int>(w)); }
  static SM3_MB_INLINE V Add(V x, V y) { return _mm256_add_epi32(x, y); }
  static SM3_MB_INLINE V Xor(V x, V y) { return _mm256_xor_si256(x, y); }
  static SM3_MB_INLINE V Xor3(V x, V y, V z) { return Xor(Xor(x, y), z); }
  // Maj(x, y, z) = (x ∧ y) ∨ ((x ∨ y) ∧ z); Choose(x, y, z) = (x ∧ y) ∨ (¬x ∧ z).
  static SM3_MB_INLINE V Maj(V x, V y, V z) {
    return _mm256_or_si256(_mm256_and_si256(x, y), _mm256_and_si256(_mm256_or_si256(x, y), z));
  }
  static SM3_MB_INLINE V Choose(V x, V y, V z) {
    return _mm256_or_si256(_mm256_and_si256(x, y), _mm256_andnot_si256(x, z));
  }
  template <int n>
  static SM3_MB_INLINE V Rol(V x) {
    return _mm256_or_si256(_mm256_slli_epi32(x, n), _mm256_srli_epi32(x, 32 - n));
  }
  // P1Core(x, P1Const()) is x ⊕ (x <<< 15) ⊕ (x <<< 23), with rol23 = rol8 ∘ rol15 done
  // as a byte shuffle (P1Const is the shuffle mask of rol8).
  static SM3_MB_INLINE V P1Const() {
    return _mm256_broadcastsi128_si256(_mm_set_epi8(14, 13, 12, 15, 10, 9, 8, 11, 6, 5, 4, 7, 2, 1, 0, 3));
  }
  static SM3_MB_INLINE V P1Core(V x, V rol8) {
    const V x15 = Rol<15>(x);
    return Xor3(x, x15, _mm256_shuffle_epi8(x15, rol8));
  }

  static SM3_MB_TARGET inline void LoadTransposed(const uint8_t* const* ptrs, size_t offset,
                                                  V w[16]) {
    const V bswap = _mm256_broadcastsi128_si256(
        _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
    for (int half = 0; half < 2; ++half) {
      V r[8], t[8];
      for (int i = 0; i < 8; ++i) {
        r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ptrs[i] + offset + 32 * half));
      }
      for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
      }
      // 128-bit lane L of r[4q + k] now holds word 4L + k of rows 4q..4q+3.
      for (int q = 0; q < 2; ++q) {
        r[4 * q + 0] = _mm256_unpacklo_epi64(t[4 * q + 0], t[4 * q + 2]);
        r[4 * q + 1] = _mm256_unpackhi_epi64(t[4 * q + 0], t[4 * q + 2]);
        r[4 * q + 2] = _mm256_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
        r[4 * q + 3] = _mm256_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
      }
      for (int k = 0; k < 4; ++k) {
        w[8 * half + k] =
            _mm256_shuffle_epi8(_mm256_permute2x128_si256(r[k], r[4 + k], 0x20), bswap);
        w[8 * half + 4 + k] =
            _mm256_shuffle_epi8(_mm256_permute2x128_si256(r[k], r[4 + k], 0x31), bswap);
      }
    }
  }
};

#include "crypto/sm3/sm3_mb_impl.inc"

}  // namespace

const Sm3Kernels kSm3Mb8Avx2 = MbKernels("mb8_avx2", kCpuAvx2);

}  // namespace smcrypt
