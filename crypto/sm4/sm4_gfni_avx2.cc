// sm4_gfni_avx2.cc — SM4 (GB/T 32907-2016 §6–§7) with GFNI on VEX-256 registers, for
// CPUs with GFNI but without AVX-512 (Alder Lake, Raptor Lake, Tremont/Gracemont).
//
// Instructions: VGF2P8AFFINEQB, VGF2P8AFFINEINVQB (GFNI, VEX-encoded on ymm and xmm),
//   VPSHUFB, VPSLLD/VPSRLD/VPOR (rotates), VPXOR, VPUNPCK*, VPMASKMOVD, VPCMPGTD.
// CPU features: kCpuAvx2 and kCpuGfni.
// Technique: "S-box by GF2P8AFFINEINVQB", as sm4_gfni_avx512.cc explains (the same two
//   affine matrices, ψ·A with 0x3E and A·ψ⁻¹ with 0xD3).
// Modes, layout and batch widths: sm4_simd_impl.inc and sm4_ops_avx2.inc (16 blocks in
//   flight, then 8, then a masked ymm group; serial modes on xmm).
//
// Constant time: yes. No table in memory: the S-box is two GF(2) affine instructions
//   around a hardware field inversion of data-independent latency; VPSHUFB uses constant
//   masks. Branches, masks and addresses as sm4_simd_impl.inc states.
// How it is checked: valgrind 3.19 cannot decode GFNI (VGF2P8AFFINE*QB), so this back end is
//   not run by the memcheck test (tests/ct/ct_valgrind_test.cc) but by the statistical
//   fixed-vs-random timing test tests/ct/ct_dudect_test.cc (dudect, label slow: Welch's
//   t on cropped RDTSCP timings, fails if |t| > 10).
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

#define SM4_TARGET __attribute__((target("avx,avx2,gfni")))
#define SM4_INLINE SM4_TARGET inline __attribute__((always_inline))

namespace smcrypt {
namespace {

// ψ·A and ψ(0xD3); A·ψ⁻¹ and 0xD3 (derivation in sm4_gfni_avx512.cc; checked against
// the standard's S-box table by tests/crypto/sm4/sm4_backends_test.cc).
constexpr uint64_t kPreMatrix = 0x4c287db91a22505dULL;
constexpr int kPreConst = 0x3e;
constexpr uint64_t kPostMatrix = 0xf3ab34a974a6b589ULL;
constexpr int kPostConst = 0xd3;

// Tau is the S-box on every byte.
SM4_INLINE __m256i Tau(__m256i x) {
  x = _mm256_gf2p8affine_epi64_epi8(x, _mm256_set1_epi64x(kPreMatrix), kPreConst);
  return _mm256_gf2p8affineinv_epi64_epi8(x, _mm256_set1_epi64x(kPostMatrix), kPostConst);
}

SM4_INLINE __m128i Tau(__m128i x) {
  x = _mm_gf2p8affine_epi64_epi8(x, _mm_set1_epi64x(kPreMatrix), kPreConst);
  return _mm_gf2p8affineinv_epi64_epi8(x, _mm_set1_epi64x(kPostMatrix), kPostConst);
}

#include "crypto/sm4/sm4_ops_avx2.inc"
#include "crypto/sm4/sm4_simd_impl.inc"

}  // namespace

extern const Sm4Kernels kSm4GfniAvx2 =
    SimdKernels<__m256i>("gfni_avx2", kCpuAvx | kCpuAvx2 | kCpuGfni);

}  // namespace smcrypt
