// sm3_mb16_avx512.cc — multi-buffer SM3: sixteen independent messages side by side in
// AVX-512 registers (GB/T 32905-2016 §5.3).
//
// Instructions: AVX-512F/BW (VPROLD rotates, VPTERNLOGD for FF/GG/P0/P1 and three-way
// XORs, VPADDD, VPSHUFB for the byte order, VPUNPCK*/VSHUFI32X4 for the transpose).
// CPU features: kCpuAvx512 (F+BW+VL+DQ, ZMM state enabled by the OS).
// Technique: lane i of every ZMM register belongs to message i, so register A holds
// word A of all sixteen chaining values and W_j of all sixteen blocks is one register.
// Each step loads one 64-byte block per lane and transposes the 16×16 word matrix;
// W_16..W_67 are expanded on the fly (three VPTERNLOGD and four VPROLD per word); the
// 64 rounds are unrolled. Lanes are scheduled by Sm3RunLanes (sm3.cc): a lane whose
// message ends is refilled from the queue, and padding is built per lane.
// Batch width: 16 messages.
// Constant time: no table lookups and no branches or addresses that depend on message
// contents or chaining values; the scheduler branches only on (public) lengths. The
// expanded words live in registers and stack slots that are overwritten with zeros
// before returning.
// How it is checked: valgrind 3.19 cannot decode AVX-512, so this back end is
//   not run by the memcheck test (tests/ct/ct_valgrind_test.cc) but by the statistical
//   fixed-vs-random timing test tests/ct/ct_dudect_test.cc (dudect, label slow: Welch's
//   t on cropped RDTSCP timings, fails if |t| > 10). Review (issue 11): every branch
//   and loop in this file tests a block count, a compile-time parameter or a pointer
//   (the lane scheduler, Sm3RunLanes, tests lengths and runs under valgrind through
//   mb8_avx2); no load or store address is computed from chaining values or data.
#include <cstddef>
#include <cstdint>

#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/cpu.h"

#if defined(__x86_64__)
#include <immintrin.h>

// GCC 12 reports the unmasked AVX-512 intrinsics' internal "undefined" source operand
// as maybe-uninitialized; the instructions used here never read it.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define SM3_MB16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

namespace smcrypt {
namespace {

constexpr size_t kLanes = 16;

constexpr uint32_t RolC(uint32_t x, int n) { return n == 0 ? x : (x << n) | (x >> (32 - n)); }
constexpr uint32_t TjRot(int j) { return RolC(j < 16 ? 0x79cc4519u : 0x7a879d8au, j % 32); }

#define ROL(x, n) _mm512_rol_epi32((x), (n))
#define XOR3(x, y, z) _mm512_ternarylogic_epi32((x), (y), (z), 0x96)
#define MAJ(x, y, z) _mm512_ternarylogic_epi32((x), (y), (z), 0xe8)
#define CHOOSE(x, y, z) _mm512_ternarylogic_epi32((x), (y), (z), 0xca)
#define ADD(x, y) _mm512_add_epi32((x), (y))

// LoadTransposed loads block `blk` of each lane and returns w[j] = word j of every
// lane, big-endian words converted.
SM3_MB16_TARGET inline void LoadTransposed(const uint8_t* const* ptrs, size_t offset,
                                           __m512i w[16]) {
  const __m512i bswap = _mm512_broadcast_i32x4(
      _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
  __m512i r[16], t[16];
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
    const __m512i x0 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x88);
    const __m512i x1 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xdd);
    const __m512i y0 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x88);
    const __m512i y1 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xdd);
    w[k] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(x0, y0, 0x88), bswap);
    w[8 + k] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(x0, y0, 0xdd), bswap);
    w[4 + k] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(x1, y1, 0x88), bswap);
    w[12 + k] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(x1, y1, 0xdd), bswap);
  }
}

// One round of §5.3.3; afterwards the new (A..H) are (d, a, b, c, h, e, f, g).
#define MB_ROUND(J, a, b, c, d, e, f, g, h, FF, GG)                                    \
  do {                                                                                 \
    const __m512i a12 = ROL(a, 12);                                                    \
    const __m512i ss1 = ROL(ADD(ADD(a12, _mm512_set1_epi32(TjRot(J))), e), 7);         \
    const __m512i ss2 = _mm512_xor_si512(ss1, a12);                                    \
    const __m512i tt1 =                                                                \
        ADD(ADD(FF(a, b, c), ADD(d, _mm512_xor_si512(w[(J) % 16], w[((J) + 4) % 16]))), ss2); \
    const __m512i tt2 = ADD(ADD(GG(e, f, g), ADD(h, w[(J) % 16])), ss1);               \
    b = ROL(b, 9);                                                                     \
    f = ROL(f, 19);                                                                    \
    d = tt1;                                                                           \
    h = XOR3(tt2, ROL(tt2, 9), ROL(tt2, 17));                                          \
  } while (0)

// W_{J+4} for rounds J >= 12, stored in the 16-entry ring w (W_j at w[j % 16]):
// W_j = P1(W_{j-16} ⊕ W_{j-9} ⊕ (W_{j-3} <<< 15)) ⊕ (W_{j-13} <<< 7) ⊕ W_{j-6}.
#define MB_EXPAND(N)                                                                  \
  do {                                                                                \
    const __m512i x = XOR3(w[(N) % 16], w[((N) + 7) % 16], ROL(w[((N) + 13) % 16], 15)); \
    w[(N) % 16] = XOR3(XOR3(x, ROL(x, 15), ROL(x, 23)), ROL(w[((N) + 3) % 16], 7),   \
                       w[((N) + 10) % 16]);                                           \
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

SM3_MB16_TARGET void Sm3Mb16CompressLanes(uint32_t* st, const uint8_t* const* ptrs,
                                         size_t num_blocks) {
  __m512i a = _mm512_load_si512(st + 0 * kLanes), b = _mm512_load_si512(st + 1 * kLanes);
  __m512i c = _mm512_load_si512(st + 2 * kLanes), d = _mm512_load_si512(st + 3 * kLanes);
  __m512i e = _mm512_load_si512(st + 4 * kLanes), f = _mm512_load_si512(st + 5 * kLanes);
  __m512i g = _mm512_load_si512(st + 6 * kLanes), h = _mm512_load_si512(st + 7 * kLanes);
  __m512i w[16];
  for (size_t blk = 0; blk < num_blocks; ++blk) {
    LoadTransposed(ptrs, blk * 64, w);
    const __m512i a0 = a, b0 = b, c0 = c, d0 = d, e0 = e, f0 = f, g0 = g, h0 = h;
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
    a = _mm512_xor_si512(a, a0);
    b = _mm512_xor_si512(b, b0);
    c = _mm512_xor_si512(c, c0);
    d = _mm512_xor_si512(d, d0);
    e = _mm512_xor_si512(e, e0);
    f = _mm512_xor_si512(f, f0);
    g = _mm512_xor_si512(g, g0);
    h = _mm512_xor_si512(h, h0);
  }
  _mm512_store_si512(st + 0 * kLanes, a);
  _mm512_store_si512(st + 1 * kLanes, b);
  _mm512_store_si512(st + 2 * kLanes, c);
  _mm512_store_si512(st + 3 * kLanes, d);
  _mm512_store_si512(st + 4 * kLanes, e);
  _mm512_store_si512(st + 5 * kLanes, f);
  _mm512_store_si512(st + 6 * kLanes, g);
  _mm512_store_si512(st + 7 * kLanes, h);
  // Overwrite the message words (secret for HMAC keys and KDF input) wherever the
  // compiler kept them.
  for (__m512i& x : w) x = _mm512_setzero_si512();
  __asm__ __volatile__("" : : "r"(w) : "memory");
}

#undef ROL
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

void Sm3Mb16HashJobs(const Sm3Job* jobs, size_t num_jobs) {
  Sm3RunLanes(kLanes, Sm3Mb16CompressLanes, jobs, num_jobs);
}

void Sm3Mb16Batch(const absl::string_view* messages, size_t num_messages, uint8_t* out) {
  Sm3BatchWithHashJobs(Sm3Mb16HashJobs, messages, num_messages, out);
}

}  // namespace

const Sm3Kernels kSm3Mb16Avx512 = {
    /*name=*/"mb16_avx512",
    /*required_features=*/kCpuAvx512,
    /*compress_blocks=*/Sm3DispatchedCompressBlocks,
    /*batch=*/Sm3Mb16Batch,
    /*lanes=*/kLanes,
    /*hash_jobs=*/Sm3Mb16HashJobs,
};

}  // namespace smcrypt

#endif  // defined(__x86_64__)
