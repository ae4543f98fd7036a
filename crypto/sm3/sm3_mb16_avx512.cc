// sm3_mb16_avx512.cc — multi-buffer SM3: sixteen independent messages side by side in
// AVX-512 registers (GB/T 32905-2016 §5.3), with the compression of sm3_mb_impl.inc.
//
// Instructions: AVX-512F/BW (VPROLD rotates, VPTERNLOGD for FF/GG/P0/P1 and three-way
// XORs, VPADDD, VPSHUFB for the byte order, VPUNPCK*/VSHUFI32X4 for the transpose).
// CPU features: kCpuAvx512 (F+BW+VL+DQ, ZMM state enabled by the OS).
// Technique: each step loads one 64-byte block per lane and transposes the 16×16 word
// matrix; each expanded word costs three VPTERNLOGD and four VPROLD. Batch width: 16
// messages.
// Constant time: as sm3_mb_impl.inc states (no table, no data-dependent branch or
// address; the expanded words, in registers and stack slots, are wiped).
// How it is checked: valgrind 3.19 cannot decode AVX-512, so this back end is
//   not run by the memcheck test (tests/ct/ct_valgrind_test.cc) but by the statistical
//   fixed-vs-random timing test tests/ct/ct_dudect_test.cc (dudect, label slow: Welch's
//   t on cropped RDTSCP timings, fails if |t| > 10); the same compression runs under
//   valgrind through mb8_avx2.
#include <cstddef>
#include <cstdint>

#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/cpu.h"

#include <immintrin.h>

// GCC 12 reports the unmasked AVX-512 intrinsics' internal "undefined" source operand
// as maybe-uninitialized; the instructions used here never read it.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define SM3_MB_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define SM3_MB_INLINE SM3_MB_TARGET inline __attribute__((always_inline))

namespace smcrypt {
namespace {

struct MbOps {
  using V = __m512i;
  static constexpr size_t kLanes = 16;
  static SM3_MB_INLINE V Load(const uint32_t* p) { return _mm512_load_si512(p); }
  static SM3_MB_INLINE void Store(uint32_t* p, V v) { _mm512_store_si512(p, v); }
  static SM3_MB_INLINE V Zero() { return _mm512_setzero_si512(); }
  static SM3_MB_INLINE V Set1(uint32_t w) { return _mm512_set1_epi32(static_cast<int>(w)); }
  static SM3_MB_INLINE V Add(V x, V y) { return _mm512_add_epi32(x, y); }
  static SM3_MB_INLINE V Xor(V x, V y) { return _mm512_xor_si512(x, y); }
  static SM3_MB_INLINE V Xor3(V x, V y, V z) { return _mm512_ternarylogic_epi32(x, y, z, 0x96); }
  static SM3_MB_INLINE V Maj(V x, V y, V z) { return _mm512_ternarylogic_epi32(x, y, z, 0xe8); }
  static SM3_MB_INLINE V Choose(V x, V y, V z) { return _mm512_ternarylogic_epi32(x, y, z, 0xca); }
  template <int n>
  static SM3_MB_INLINE V Rol(V x) {
    return _mm512_rol_epi32(x, n);
  }
  static SM3_MB_INLINE V P1Const() { return Zero(); }  // unused
  static SM3_MB_INLINE V P1Core(V x, V) { return Xor3(x, Rol<15>(x), Rol<23>(x)); }

  static SM3_MB_TARGET inline void LoadTransposed(const uint8_t* const* ptrs, size_t offset,
                                                  V w[16]) {
    const V bswap = _mm512_broadcast_i32x4(
        _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
    V r[16], t[16];
    for (int i = 0; i < 16; ++i) {
      r[i] = _mm512_loadu_si512(reinterpret_cast<const void*>(ptrs[i] + offset));
    }
    for (int i = 0; i < 16; i += 2) {
      t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    // After this step, 128-bit lane L of r[4q + k] holds word 4L + k of rows 4q..4q+3.
    for (int q = 0; q < 4; ++q) {
      r[4 * q + 0] = _mm512_unpacklo_epi64(t[4 * q + 0], t[4 * q + 2]);
      r[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q + 0], t[4 * q + 2]);
      r[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
      r[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
    }
    for (int k = 0; k < 4; ++k) {
      const V x0 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x88);
      const V x1 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xdd);
      const V y0 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x88);
      const V y1 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xdd);
      w[k] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(x0, y0, 0x88), bswap);
      w[8 + k] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(x0, y0, 0xdd), bswap);
      w[4 + k] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(x1, y1, 0x88), bswap);
      w[12 + k] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(x1, y1, 0xdd), bswap);
    }
  }
};

#include "crypto/sm3/sm3_mb_impl.inc"

}  // namespace

const Sm3Kernels kSm3Mb16Avx512 = MbKernels("mb16_avx512", kCpuAvx512);

}  // namespace smcrypt
