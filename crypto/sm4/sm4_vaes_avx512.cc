// sm4_vaes_avx512.cc — SM4 (GB/T 32907-2016 §6–§7) with VAES on AVX-512 registers, for
// CPUs with VAES and AVX-512 but no GFNI (none shipped so far, but the features are
// separate CPUID bits, and SMCRYPT_CPU_DISABLE=gfni selects it on GFNI machines).
//
// Instructions: VAESENCLAST on zmm (four AES states per instruction), VPSHUFB nibble
//   tables, VPROLD, VPTERNLOGD, VPUNPCK*, VALIGNQ, masked loads/stores, VPCMPUD.
// CPU features: kCpuAvx512, kCpuVaes and kCpuAesni (the xmm serial path uses AESENCLAST).
// Technique: "S-box by AESENCLAST with pre/post affine maps" (the sm4ni construction,
//   sm4_sbox_aes.inc), four AES states per VAESENCLAST.
// Modes, layout and batch widths: sm4_simd_impl.inc and sm4_ops_avx512.inc, as
//   sm4_gfni_avx512.cc (no fused GCM path).
//
// Constant time: yes. VPSHUFB indexes a register with data, not memory; the tables are
//   constants in registers. AESENCLAST has data-independent latency. Branches, masks
//   and addresses as sm4_simd_impl.inc states.
// How it is checked: valgrind 3.19 cannot decode AVX-512 or VAES, so this back end is
//   not run by the memcheck test (tests/ct/ct_valgrind_test.cc) but by the statistical
//   fixed-vs-random timing test tests/ct/ct_dudect_test.cc (dudect, label slow: Welch's
//   t on cropped RDTSCP timings, fails if |t| > 10).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"
#include "smcrypt/secure_zero.h"

// GCC 12 warns that __m512i's alignment/aliasing attributes are dropped when it is a
// template argument (harmless: values live in registers), and flags the intentionally
// undefined pass-through operand inside its own AVX-512 headers.
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define SM4_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,vaes,aes")))
#define SM4_INLINE SM4_TARGET inline __attribute__((always_inline))

namespace smcrypt {
namespace {

#include "crypto/sm4/sm4_sbox_aes.inc"

// Affine and Tau on zmm (the xmm layer is in sm4_sbox_aes.inc).
SM4_INLINE __m512i Affine(__m512i x, __m128i lo_t, __m128i hi_t) {
  const __m512i m = _mm512_set1_epi8(0x0f);
  const __m512i lo = _mm512_and_si512(x, m);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), m);
  return _mm512_xor_si512(_mm512_shuffle_epi8(_mm512_broadcast_i32x4(lo_t), lo),
                          _mm512_shuffle_epi8(_mm512_broadcast_i32x4(hi_t), hi));
}

SM4_INLINE __m512i Tau(__m512i x) {
  x = Affine(x, _mm_setr_epi8(SM4_PRE_LO), _mm_setr_epi8(SM4_PRE_HI));
  x = _mm512_shuffle_epi8(x, _mm512_broadcast_i32x4(_mm_setr_epi8(SM4_INV_SHIFT_ROWS)));
  x = _mm512_aesenclast_epi128(x, _mm512_setzero_si512());
  return Affine(x, _mm_setr_epi8(SM4_POST_LO), _mm_setr_epi8(SM4_POST_HI));
}

#include "crypto/sm4/sm4_ops_avx512.inc"
#include "crypto/sm4/sm4_simd_impl.inc"

}  // namespace

extern const Sm4Kernels kSm4VaesAvx512 =
    SimdKernels<__m512i>("vaes_avx512", kCpuAvx512 | kCpuVaes | kCpuAesni);

}  // namespace smcrypt
