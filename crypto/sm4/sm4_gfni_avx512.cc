// sm4_gfni_avx512.cc — SM4 (GB/T 32907-2016 §6–§7) with GFNI on AVX-512 registers.
//
// Instructions: GF2P8AFFINEQB, GF2P8AFFINEINVQB (GFNI, EVEX-encoded on zmm and xmm),
//   VPROLD, VPTERNLOGD, VPSHUFB, VPUNPCK*, VALIGNQ, masked loads/stores, VPCMPUD; the
//   fused GCM path adds VPCLMULQDQ.
// CPU features: kCpuAvx512 (F+BW+VL+DQ) and kCpuGfni (Ice Lake, Tiger Lake, Sapphire
//   Rapids, Zen 4, Zen 5 and later).
// Technique: "S-box by GF2P8AFFINEINVQB". The SM4 S-box is affine–inverse–affine,
//   S(x) = A·I(A·x ⊕ 0xD3) ⊕ 0xD3 with I the inverse in SM4's field GF(2)[t]/(0x1F5).
//   With ψ the field isomorphism into AES's field GF(2)[t]/(0x11B) (t ↦ 0x23, a root of
//   SM4's polynomial there), I = ψ⁻¹∘I_AES∘ψ, so
//     S(x) = (A·ψ⁻¹)·I_AES((ψ·A)·x ⊕ ψ(0xD3)) ⊕ 0xD3,
//   i.e. GF2P8AFFINEQB with matrix ψ·A and constant ψ(0xD3) = 0x3E, then
//   GF2P8AFFINEINVQB (AES-field inverse, then affine) with matrix A·ψ⁻¹ and constant
//   0xD3: two instructions for 64 S-boxes. (A matrix's byte 7−i is the row that
//   computes output bit i.)
// Modes, layout and batch widths: sm4_simd_impl.inc and sm4_ops_avx512.inc (64 blocks
//   in flight, then 32, 16, a masked zmm group and 1–3 blocks on xmm). SM4-GCM fused
//   (GcmCryptFused, used only with the vpclmulqdq_avx512 GHASH back end, whose presence
//   implies PCLMULQDQ and VPCLMULQDQ): measured 3–6% faster than separate 4 KiB CTR and
//   GHASH passes at 4–16 KiB, equal at 1 KiB.
//
// Constant time: yes. No table in memory: the S-box is two GF(2) affine instructions
//   around a hardware field inversion whose latency does not depend on data; branches,
//   masks and addresses as sm4_simd_impl.inc states. The fused GCM path adds only
//   carry-less multiplies on the ciphertext and the powers of H, held in registers.
// How it is checked: valgrind 3.19 cannot decode AVX-512, GFNI or VPCLMULQDQ, so this
//   back end is not run by the memcheck test (tests/ct/ct_valgrind_test.cc) but by the
//   statistical fixed-vs-random timing test tests/ct/ct_dudect_test.cc (dudect, label
//   slow: Welch's t on cropped RDTSCP timings, fails if |t| > 10).
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

#define SM4_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,gfni")))
#define SM4_INLINE SM4_TARGET inline __attribute__((always_inline))
#define SM4_GCM_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,gfni,pclmul,vpclmulqdq")))

namespace smcrypt {
namespace {

// ψ·A and ψ(0xD3); A·ψ⁻¹ and 0xD3 (derivation in the header comment; checked against
// the standard's S-box table by tests/crypto/sm4/sm4_backends_test.cc).
constexpr uint64_t kPreMatrix = 0x4c287db91a22505dULL;
constexpr int kPreConst = 0x3e;
constexpr uint64_t kPostMatrix = 0xf3ab34a974a6b589ULL;
constexpr int kPostConst = 0xd3;

// Tau is the S-box on every byte.
SM4_INLINE __m512i Tau(__m512i x) {
  x = _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(kPreMatrix), kPreConst);
  return _mm512_gf2p8affineinv_epi64_epi8(x, _mm512_set1_epi64(kPostMatrix), kPostConst);
}

SM4_INLINE __m128i Tau(__m128i x) {
  x = _mm_gf2p8affine_epi64_epi8(x, _mm_set1_epi64x(kPreMatrix), kPreConst);
  return _mm_gf2p8affineinv_epi64_epi8(x, _mm_set1_epi64x(kPostMatrix), kPostConst);
}

#include "crypto/sm4/sm4_ops_avx512.inc"
#include "crypto/sm4/sm4_simd_impl.inc"

}  // namespace

extern const Sm4Kernels kSm4GfniAvx512 = SimdKernels<__m512i>(
    "gfni_avx512", kCpuAvx512 | kCpuGfni, GcmCryptFused, &internal::kGhashVpclmulAvx512);

}  // namespace smcrypt
