// sm4_aesni_avx2.cc — SM4 (GB/T 32907-2016 §6–§7) with AES-NI and AVX2: the x86-64
// fallback for CPUs without GFNI (Haswell through Comet Lake, Zen 1–3).
//
// Instructions: AESENCLAST (xmm; a ymm register is split into its two halves),
//   VPSHUFB nibble tables, VPSLLD/VPSRLD/VPOR, VPXOR, VPUNPCK*, VPMASKMOVD, VPCMPGTD.
// CPU features: kCpuAesni, kCpuAvx and kCpuAvx2.
// Technique: "S-box by AESENCLAST with pre/post affine maps" (the sm4ni construction
//   of sm4_sbox_aes.inc, as libgcrypt's sm4-aesni-avx2); a ymm register is split into
//   two AESENCLASTs.
// Modes, layout and batch widths: sm4_simd_impl.inc and sm4_ops_avx2.inc, as
//   sm4_gfni_avx2.cc.
//
// Constant time: yes. VPSHUFB indexes a register with data, not memory; the tables are
//   constants. AESENCLAST has data-independent latency. Branches, masks and addresses
//   as sm4_simd_impl.inc states.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"
#include "smcrypt/secure_zero.h"

// GCC 12 warns that __m256i's alignment/aliasing attributes are dropped when it is a
// template argument (harmless: values live in registers), and flags the intentionally
// undefined pass-through operand inside its own AVX-512 headers.
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define SM4_TARGET __attribute__((target("avx,avx2,aes")))
#define SM4_INLINE SM4_TARGET inline __attribute__((always_inline))

namespace smcrypt {
namespace {

#include "crypto/sm4/sm4_sbox_aes.inc"

// Affine and Tau on ymm (the xmm layer is in sm4_sbox_aes.inc).
SM4_INLINE __m256i Affine(__m256i x, __m128i lo_t, __m128i hi_t) {
  const __m256i m = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(x, m);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m);
  return _mm256_xor_si256(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(lo_t), lo),
                          _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(hi_t), hi));
}

SM4_INLINE __m256i Tau(__m256i x) {
  x = Affine(x, _mm_setr_epi8(SM4_PRE_LO), _mm_setr_epi8(SM4_PRE_HI));
  x = _mm256_shuffle_epi8(x, _mm256_broadcastsi128_si256(_mm_setr_epi8(SM4_INV_SHIFT_ROWS)));
  // AESENCLAST is 128-bit only without VAES: one per half.
  const __m128i z = _mm_setzero_si128();
  const __m128i a = _mm_aesenclast_si128(_mm256_castsi256_si128(x), z);
  const __m128i b = _mm_aesenclast_si128(_mm256_extracti128_si256(x, 1), z);
  x = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
  return Affine(x, _mm_setr_epi8(SM4_POST_LO), _mm_setr_epi8(SM4_POST_HI));
}

#include "crypto/sm4/sm4_ops_avx2.inc"
#include "crypto/sm4/sm4_simd_impl.inc"

}  // namespace

extern const Sm4Kernels kSm4AesniAvx2 =
    SimdKernels<__m256i>("aesni_avx2", kCpuAesni | kCpuAvx | kCpuAvx2);

}  // namespace smcrypt
