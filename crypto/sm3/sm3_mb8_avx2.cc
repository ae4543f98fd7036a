// sm3_mb8_avx2.cc — multi-buffer SM3: eight independent messages side by side in AVX2
// registers (GB/T 32905-2016 §5.3).
//
// Instructions: AVX2 (VPSLLD/VPSRLD/VPOR rotates, VPXOR/VPAND/VPANDN/VPOR for FF/GG, VPADDD,
// VPSHUFB for the byte order and for the rotate by 8 inside P1, VPUNPCK*/VPERM2I128 for
// the transpose). CPU features: kCpuAvx2 (which implies AVX with YMM state enabled).
// Technique: lane i of every YMM register belongs to message i, so register A holds
// word A of all eight chaining values and W_j of all eight blocks is one register. Each
// step loads one 64-byte block per lane and transposes two 8×8 word matrices;
// W_16..W_67 are expanded on the fly; the 64 rounds are unrolled. Lanes are scheduled
// by Sm3RunLanes (sm3.cc): a lane whose message ends is refilled from the queue, and
// padding is built per lane.
// Batch width: 8 messages.
// Constant time: no table lookups and no branches or addresses that depend on message
// contents or chaining values; the scheduler branches only on (public) lengths. The
// expanded words are overwritten with zeros before returning.
#include <cstddef>
#include <cstdint>

#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/cpu.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define SM3_MB8_TARGET __attribute__((target("avx2")))

namespace smcrypt {
namespace {

constexpr size_t kLanes = 8;

constexpr uint32_t RolC(uint32_t x, int n) { return n == 0 ? x : (x << n) | (x >> (32 - n)); }
constexpr uint32_t TjRot(int j) { return RolC(j < 16 ? 0x79cc4519u : 0x7a879d8au, j % 32); }

#define ROL(x, n) _mm256_or_si256(_mm256_slli_epi32((x), (n)), _mm256_srli_epi32((x), 32 - (n)))
#define XOR(x, y) _mm256_xor_si256((x), (y))
#define XOR3(x, y, z) XOR(XOR((x), (y)), (z))
// MAJ(x, y, z) = (x ∧ y) ∨ ((x ∨ y) ∧ z); CHOOSE(x, y, z) = (x ∧ y) ∨ (¬x ∧ z).
#define MAJ(x, y, z) \
  _mm256_or_si256(_mm256_and_si256((x), (y)), _mm256_and_si256(_mm256_or_si256((x), (y)), (z)))
#define CHOOSE(x, y, z) _mm256_or_si256(_mm256_and_si256((x), (y)), _mm256_andnot_si256((x), (z)))
#define ADD(x, y) _mm256_add_epi32((x), (y))

// LoadTransposed loads block `blk` of each lane and returns w[j] = word j of every
// lane, big-endian words converted.
SM3_MB8_TARGET inline void LoadTransposed(const uint8_t* const* ptrs, size_t offset,
                                          __m256i w[16]) {
  const __m256i bswap = _mm256_broadcastsi128_si256(
      _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
  for (int half = 0; half < 2; ++half) {
    __m256i r[8], t[8];
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

// One round of §5.3.3; afterwards the new (A..H) are (d, a, b, c, h, e, f, g).
#define MB_ROUND(J, a, b, c, d, e, f, g, h, FF, GG)                                    \
  do {                                                                                 \
    const __m256i a12 = ROL(a, 12);                                                    \
    const __m256i ss1 = ROL(ADD(ADD(a12, _mm256_set1_epi32(TjRot(J))), e), 7);         \
    const __m256i ss2 = XOR(ss1, a12);                                                 \
    const __m256i tt1 =                                                                \
        ADD(ADD(FF(a, b, c), ADD(d, XOR(w[(J) % 16], w[((J) + 4) % 16]))), ss2);        \
    const __m256i tt2 = ADD(ADD(GG(e, f, g), ADD(h, w[(J) % 16])), ss1);               \
    b = ROL(b, 9);                                                                     \
    f = ROL(f, 19);                                                                    \
    d = tt1;                                                                           \
    h = XOR3(tt2, ROL(tt2, 9), ROL(tt2, 17));                                          \
  } while (0)

// W_{N} in the 16-entry ring w (W_j at w[j % 16]), with rol23 = rol8 ∘ rol15 done as a
// byte shuffle: W_j = P1(W_{j-16} ⊕ W_{j-9} ⊕ (W_{j-3} <<< 15)) ⊕ (W_{j-13} <<< 7) ⊕ W_{j-6}.
#define MB_EXPAND(N)                                                                  \
  do {                                                                                \
    const __m256i x = XOR3(w[(N) % 16], w[((N) + 7) % 16], ROL(w[((N) + 13) % 16], 15)); \
    const __m256i x15 = ROL(x, 15);                                                   \
    w[(N) % 16] = XOR3(XOR3(x, x15, _mm256_shuffle_epi8(x15, rol8)),                  \
                       ROL(w[((N) + 3) % 16], 7), w[((N) + 10) % 16]);                \
  } while (0)

#define FF0(x, y, z) XOR3(x, y, z)
#define GG0(x, y, z) XOR3(x, y, z)
#define FF1(x, y, z) MAJ(x, y, z)
#define GG1(x, y, z) CHOOSE(x, y, z)

// Four rounds J..J+3; from J = 12 on, W_{J+4}..W_{J+7} are expanded first (round j
// needs W_j and W_{j+4}).
#define MB_ROUND4(J, FF, GG)                                   \
  if ((J) >= 12 && (J) + 4 < 68) {                             \
    MB_EXPAND((J) + 4);                                        \
    MB_EXPAND((J) + 5);                                        \
    MB_EXPAND((J) + 6);                                        \
    MB_EXPAND((J) + 7);                                        \
  }                                                            \
  MB_ROUND((J) + 0, a, b, c, d, e, f, g, h, FF, GG);           \
  MB_ROUND((J) + 1, d, a, b, c, h, e, f, g, FF, GG);           \
  MB_ROUND((J) + 2, c, d, a, b, g, h, e, f, FF, GG);           \
  MB_ROUND((J) + 3, b, c, d, a, f, g, h, e, FF, GG)

SM3_MB8_TARGET void Sm3Mb8CompressLanes(uint32_t* st, const uint8_t* const* ptrs,
                                        size_t num_blocks) {
  const __m256i rol8 = _mm256_broadcastsi128_si256(
      _mm_set_epi8(14, 13, 12, 15, 10, 9, 8, 11, 6, 5, 4, 7, 2, 1, 0, 3));
  __m256i a = _mm256_load_si256(reinterpret_cast<const __m256i*>(st + 0 * kLanes));
  __m256i b = _mm256_load_si256(reinterpret_cast<const __m256i*>(st + 1 * kLanes));
  __m256i c = _mm256_load_si256(reinterpret_cast<const __m256i*>(st + 2 * kLanes));
  __m256i d = _mm256_load_si256(reinterpret_cast<const __m256i*>(st + 3 * kLanes));
  __m256i e = _mm256_load_si256(reinterpret_cast<const __m256i*>(st + 4 * kLanes));
  __m256i f = _mm256_load_si256(reinterpret_cast<const __m256i*>(st + 5 * kLanes));
  __m256i g = _mm256_load_si256(reinterpret_cast<const __m256i*>(st + 6 * kLanes));
  __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(st + 7 * kLanes));
  __m256i w[16];
  for (size_t blk = 0; blk < num_blocks; ++blk) {
    LoadTransposed(ptrs, blk * 64, w);
    const __m256i a0 = a, b0 = b, c0 = c, d0 = d, e0 = e, f0 = f, g0 = g, h0 = h;
    MB_ROUND4(0, FF0, GG0);
    MB_ROUND4(4, FF0, GG0);
    MB_ROUND4(8, FF0, GG0);
    MB_ROUND4(12, FF0, GG0);
    MB_ROUND4(16, FF1, GG1);
    MB_ROUND4(20, FF1, GG1);
    MB_ROUND4(24, FF1, GG1);
    MB_ROUND4(28, FF1, GG1);
    MB_ROUND4(32, FF1, GG1);
    MB_ROUND4(36, FF1, GG1);
    MB_ROUND4(40, FF1, GG1);
    MB_ROUND4(44, FF1, GG1);
    MB_ROUND4(48, FF1, GG1);
    MB_ROUND4(52, FF1, GG1);
    MB_ROUND4(56, FF1, GG1);
    MB_ROUND4(60, FF1, GG1);
    a = _mm256_xor_si256(a, a0);
    b = _mm256_xor_si256(b, b0);
    c = _mm256_xor_si256(c, c0);
    d = _mm256_xor_si256(d, d0);
    e = _mm256_xor_si256(e, e0);
    f = _mm256_xor_si256(f, f0);
    g = _mm256_xor_si256(g, g0);
    h = _mm256_xor_si256(h, h0);
  }
  _mm256_store_si256(reinterpret_cast<__m256i*>(st + 0 * kLanes), a);
  _mm256_store_si256(reinterpret_cast<__m256i*>(st + 1 * kLanes), b);
  _mm256_store_si256(reinterpret_cast<__m256i*>(st + 2 * kLanes), c);
  _mm256_store_si256(reinterpret_cast<__m256i*>(st + 3 * kLanes), d);
  _mm256_store_si256(reinterpret_cast<__m256i*>(st + 4 * kLanes), e);
  _mm256_store_si256(reinterpret_cast<__m256i*>(st + 5 * kLanes), f);
  _mm256_store_si256(reinterpret_cast<__m256i*>(st + 6 * kLanes), g);
  _mm256_store_si256(reinterpret_cast<__m256i*>(st + 7 * kLanes), h);
  // Overwrite the message words (secret for HMAC keys and KDF input) wherever the
  // compiler kept them.
  for (__m256i& x : w) x = _mm256_setzero_si256();
  __asm__ __volatile__("" : : "r"(w) : "memory");
}

#undef ROL
#undef XOR
#undef XOR3
#undef MAJ
#undef CHOOSE
#undef ADD
#undef MB_ROUND
#undef MB_EXPAND
#undef MB_ROUND4
#undef FF0
#undef FF1
#undef GG0
#undef GG1

void Sm3Mb8HashJobs(const Sm3Job* jobs, size_t num_jobs) {
  Sm3RunLanes(kLanes, Sm3Mb8CompressLanes, jobs, num_jobs);
}

void Sm3Mb8Batch(const absl::string_view* messages, size_t num_messages, uint8_t* out) {
  Sm3BatchWithHashJobs(Sm3Mb8HashJobs, messages, num_messages, out);
}

}  // namespace

const Sm3Kernels kSm3Mb8Avx2 = {
    /*name=*/"mb8_avx2",
    /*required_features=*/kCpuAvx2,
    /*compress_blocks=*/Sm3DispatchedCompressBlocks,
    /*batch=*/Sm3Mb8Batch,
    /*lanes=*/kLanes,
    /*hash_jobs=*/Sm3Mb8HashJobs,
};

}  // namespace smcrypt

#endif  // defined(__x86_64__)
