// ghash_clmul.cc — GHASH (NIST SP 800-38D §6.4) on carry-less multiply instructions.
//
// Two back ends:
//   vpclmulqdq_avx512 — VPCLMULQDQ on zmm (4 blocks per instruction), 16 blocks per
//     reduction. CPU features: kCpuAvx512, kCpuVpclmulqdq, kCpuPclmul.
//   pclmul_avx — PCLMULQDQ on xmm (VEX-encoded), 4 blocks per reduction. CPU features:
//     kCpuPclmul, kCpuAvx.
// Technique: GHASH in the POLYVAL domain (RFC 8452 Appendix A): with blocks
//   byte-reversed, GHASH_H(X) = rev(POLYVAL_{H'}(rev X)) where H' = mulX(rev H), and
//   POLYVAL's dot(a, b) = a·b·x^−128 needs no bit reflection: three or four PCLMULQDQs
//   for the 256-bit product and a two-step Montgomery reduction by
//   0xC2000000000000000000000000000001 (two more PCLMULQDQs). Aggregated reduction:
//   n blocks are multiplied by K_n … K_1 (K_1 = H', K_{i+1} = dot(K_i, H'), so
//   dot(X, K_i) = X·H^i), the unreduced products are XORed, and one reduction follows.
//   GhashKey::words holds K_16 … K_1 (slot s = K_{16−s}, low qword first), so four
//   consecutive slots load as one zmm operand.
// Constant time: yes. Carry-less multiplication has data-independent latency on every
//   CPU with these features; there is no table and no data-dependent branch or address
//   (loop counts depend on the public block count only). mulX uses a mask, not a branch.
// How it is checked: pclmul_avx runs under valgrind memcheck with H, the state and the
//   data marked secret (tests/ct/ct_valgrind_test.cc, label ct). valgrind 3.19 cannot
//   decode AVX-512 or VPCLMULQDQ, so vpclmulqdq_avx512 is checked instead by the
//   fixed-vs-random timing test tests/ct/ct_dudect_test.cc (dudect, label slow: Welch's
//   t on cropped RDTSCP timings, fails if |t| > 10). Its loops test the block count
//   only, and the key powers are read at fixed offsets of GhashKey.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "crypto/sm4/ghash.h"
#include "smcrypt/cpu.h"

#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define GHASH_XMM_TARGET __attribute__((target("pclmul,avx")))
#define GHASH_XMM_INLINE GHASH_XMM_TARGET inline __attribute__((always_inline))
#define GHASH_ZMM_TARGET \
  __attribute__((target("pclmul,avx,avx2,avx512f,avx512bw,avx512vl,avx512dq,vpclmulqdq")))
#define GHASH_ZMM_INLINE GHASH_ZMM_TARGET inline __attribute__((always_inline))

namespace smcrypt::internal {
namespace {

// --- xmm helpers (used by both back ends; the zmm target is a superset) ---------------

#define GHASH_XMM_HELPERS(TARGET_INLINE, NS)                                                 \
  namespace NS {                                                                             \
  TARGET_INLINE __m128i Rev(__m128i a) {                                                     \
    return _mm_shuffle_epi8(a, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,  \
                                            14, 15));                                        \
  }                                                                                          \
  /* Mul accumulates the unreduced 256-bit product a·b into (lo, mid, hi). */                \
  TARGET_INLINE void Mul(__m128i a, __m128i b, __m128i& lo, __m128i& mid, __m128i& hi) {     \
    lo = _mm_xor_si128(lo, _mm_clmulepi64_si128(a, b, 0x00));                                \
    hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(a, b, 0x11));                                \
    mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(a, b, 0x01));                              \
    mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(a, b, 0x10));                              \
  }                                                                                          \
  /* Reduce returns (hi·x^128 + mid·x^64 + lo)·x^−128 mod the POLYVAL polynomial. */         \
  TARGET_INLINE __m128i Reduce(__m128i lo, __m128i mid, __m128i hi) {                        \
    lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));                                          \
    hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));                                          \
    const __m128i poly = _mm_set_epi64x(static_cast<long long>(0xc200000000000000ULL), 1);   \
    __m128i t = _mm_clmulepi64_si128(lo, poly, 0x10);                                        \
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);                                      \
    t = _mm_clmulepi64_si128(lo, poly, 0x10);                                                \
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);                                      \
    return _mm_xor_si128(lo, hi);                                                            \
  }                                                                                          \
  TARGET_INLINE __m128i Dot(__m128i a, __m128i b) {                                          \
    __m128i lo = _mm_setzero_si128(), mid = lo, hi = lo;                                     \
    Mul(a, b, lo, mid, hi);                                                                  \
    return Reduce(lo, mid, hi);                                                              \
  }                                                                                          \
  TARGET_INLINE __m128i LoadKey(const GhashKey& key, int i) { /* K_i */                      \
    return _mm_load_si128(reinterpret_cast<const __m128i*>(key.words + 2 * (16 - i)));       \
  }                                                                                          \
  TARGET_INLINE __m128i LoadBlock(const uint8_t* p) {                                        \
    return Rev(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));                        \
  }                                                                                          \
  }  // namespace NS

GHASH_XMM_HELPERS(GHASH_XMM_INLINE, xmm)
GHASH_XMM_HELPERS(GHASH_ZMM_INLINE, zmm)

// Init fills K_1 … K_16 (same layout for both back ends).
GHASH_XMM_TARGET void GhashInitClmul(GhashKey* key, const uint8_t h[kGhashBlockSize]) {
  *key = GhashKey();
  // H' = mulX(rev H): shift the 128-bit value left by one and fold the carry back in.
  uint64_t hi = 0, lo = 0;
  for (int i = 0; i < 8; ++i) hi = (hi << 8) | h[i];
  for (int i = 8; i < 16; ++i) lo = (lo << 8) | h[i];
  const uint64_t carry = 0 - (hi >> 63);
  hi = (hi << 1) | (lo >> 63);
  lo <<= 1;
  hi ^= carry & 0xc200000000000000ULL;
  lo ^= carry & 1;
  const __m128i h1 = _mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo));
  __m128i k = h1;
  for (int i = 1; i <= static_cast<int>(kGhashMaxPowers); ++i) {
    _mm_store_si128(reinterpret_cast<__m128i*>(key->words + 2 * (16 - i)), k);
    k = xmm::Dot(k, h1);
  }
}

// --- pclmul_avx: 4 blocks per reduction -----------------------------------------------

GHASH_XMM_TARGET void GhashUpdatePclmul(uint8_t y[kGhashBlockSize], const GhashKey& key,
                                        const uint8_t* data, size_t num_blocks) {
  using namespace xmm;
  __m128i acc = Rev(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y)));
  if (num_blocks >= 4) {
    const __m128i k1 = LoadKey(key, 1), k2 = LoadKey(key, 2), k3 = LoadKey(key, 3),
                  k4 = LoadKey(key, 4);
    while (num_blocks >= 4) {
      __m128i lo = _mm_setzero_si128(), mid = lo, hi = lo;
      Mul(_mm_xor_si128(acc, LoadBlock(data)), k4, lo, mid, hi);
      Mul(LoadBlock(data + 16), k3, lo, mid, hi);
      Mul(LoadBlock(data + 32), k2, lo, mid, hi);
      Mul(LoadBlock(data + 48), k1, lo, mid, hi);
      acc = Reduce(lo, mid, hi);
      data += 64;
      num_blocks -= 4;
    }
  }
  const __m128i k1 = LoadKey(key, 1);
  for (; num_blocks > 0; --num_blocks, data += 16) {
    acc = Dot(_mm_xor_si128(acc, LoadBlock(data)), k1);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(y), Rev(acc));
}

// --- vpclmulqdq_avx512: 16 blocks per reduction ----------------------------------------

GHASH_ZMM_INLINE __m512i Rev512(__m512i a) {
  const __m128i m = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  return _mm512_shuffle_epi8(a, _mm512_broadcast_i32x4(m));
}

GHASH_ZMM_INLINE void Mul512(__m512i a, __m512i b, __m512i& lo, __m512i& mid, __m512i& hi) {
  lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(a, b, 0x00));
  hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(a, b, 0x11));
  mid = _mm512_ternarylogic_epi64(mid, _mm512_clmulepi64_epi128(a, b, 0x01),
                                  _mm512_clmulepi64_epi128(a, b, 0x10), 0x96);
}

// Fold512 XORs the four 128-bit lanes of `a` together.
GHASH_ZMM_INLINE __m128i Fold512(__m512i a) {
  const __m256i t = _mm256_xor_si256(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1));
  return _mm_xor_si128(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

GHASH_ZMM_TARGET void GhashUpdateVpclmul(uint8_t y[kGhashBlockSize], const GhashKey& key,
                                         const uint8_t* data, size_t num_blocks) {
  __m128i acc = zmm::Rev(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y)));
  if (num_blocks >= 16) {
    // K16..K13, K12..K9, K8..K5, K4..K1.
    const __m512i p0 = _mm512_load_si512(key.words + 0);
    const __m512i p1 = _mm512_load_si512(key.words + 8);
    const __m512i p2 = _mm512_load_si512(key.words + 16);
    const __m512i p3 = _mm512_load_si512(key.words + 24);
    while (num_blocks >= 16) {
      __m512i lo = _mm512_setzero_si512(), mid = lo, hi = lo;
      const __m512i d0 =
          _mm512_xor_si512(Rev512(_mm512_loadu_si512(data)), _mm512_zextsi128_si512(acc));
      Mul512(d0, p0, lo, mid, hi);
      Mul512(Rev512(_mm512_loadu_si512(data + 64)), p1, lo, mid, hi);
      Mul512(Rev512(_mm512_loadu_si512(data + 128)), p2, lo, mid, hi);
      Mul512(Rev512(_mm512_loadu_si512(data + 192)), p3, lo, mid, hi);
      acc = zmm::Reduce(Fold512(lo), Fold512(mid), Fold512(hi));
      data += 256;
      num_blocks -= 16;
    }
  }
  if (num_blocks >= 4) {
    const __m512i p3 = _mm512_load_si512(key.words + 24);
    while (num_blocks >= 4) {
      __m512i lo = _mm512_setzero_si512(), mid = lo, hi = lo;
      const __m512i d0 =
          _mm512_xor_si512(Rev512(_mm512_loadu_si512(data)), _mm512_zextsi128_si512(acc));
      Mul512(d0, p3, lo, mid, hi);
      acc = zmm::Reduce(Fold512(lo), Fold512(mid), Fold512(hi));
      data += 64;
      num_blocks -= 4;
    }
  }
  const __m128i k1 = zmm::LoadKey(key, 1);
  for (; num_blocks > 0; --num_blocks, data += 16) {
    acc = zmm::Dot(_mm_xor_si128(acc, zmm::LoadBlock(data)), k1);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(y), zmm::Rev(acc));
}

}  // namespace

extern const GhashKernels kGhashVpclmulAvx512 = {
    "vpclmulqdq_avx512",
    kCpuAvx512 | kCpuVpclmulqdq | kCpuPclmul,
    &GhashInitClmul,
    &GhashUpdateVpclmul,
};

extern const GhashKernels kGhashPclmulAvx = {
    "pclmul_avx",
    kCpuPclmul | kCpuAvx,
    &GhashInitClmul,
    &GhashUpdatePclmul,
};

}  // namespace smcrypt::internal
