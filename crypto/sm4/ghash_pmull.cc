// ghash_pmull.cc — GHASH (NIST SP 800-38D §6.4) with the arm64 polynomial multiply
// (FEAT_PMULL).
//
// Back end pmull — CPU features: kCpuPmull and kCpuAsimd. Every function carries
//   __attribute__((target("+crypto"))): gcc 12's arm_neon.h declares vmull_p64 under
//   "+crypto" (AES and SHA-2). Only PMULL/PMULL2 of that extension are used (FEAT_PMULL
//   implies FEAT_AES); nothing else in the binary is built for it.
// Instructions: PMULL/PMULL2 (64×64 → 128 carry-less), EOR, EXT, TBL (byte reversal),
//   LD1/ST1.
// Technique: the POLYVAL domain of ghash_clmul.cc (RFC 8452 Appendix A): blocks are
//   byte-reversed (one TBL), H' = mulX(rev H), and dot(a, b) = a·b·x^−128 is reduced
//   by 0xC2000000000000000000000000000001 with two PMULLs. Each 128×128 product is
//   three PMULLs (Karatsuba: lo·lo, hi·hi, (lo⊕hi)·(lo⊕hi)); the key's (lo⊕hi) halves
//   are precomputed. Aggregated reduction over 8 blocks: block j of 8 is multiplied by
//   K_{8−j} (K_1 = H', K_{i+1} = dot(K_i, H')), the unreduced products are XORed and
//   reduced once; then 4 blocks at a time, then one.
// GhashKey layout: words[2s], words[2s+1] = K_{8−s} (low qword first), s = 0..7; then
//   words[16 + s] = K_{8−s}.lo ⊕ K_{8−s}.hi, so two consecutive ones load as one
//   register whose lanes PMULL and PMULL2 take. words[24..31] are zero.
//
// Constant-time review. Secret: H and its powers, the state y and the data. PMULL and
//   PMULL2 multiply registers; there is no table. Every load address is the key or the
//   data pointer plus an immediate or a post-increment by 16·(public block count);
//   branches test the block count only; mulX uses a mask, not a branch. Arm lists PMULL
//   among the instructions with data-independent timing when PSTATE.DIT is set (Arm ARM
//   DDI 0487, FEAT_DIT); smcrypt does not set DIT and assumes, as every arm64 GCM
//   implementation does, that PMULL's timing does not depend on its operands. Not
//   measured. tests/arm64/check_disassembly.py checks the object code for
//   register-offset loads and stores.

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "crypto/common/bytes.h"
#include "crypto/sm4/ghash.h"
#include "smcrypt/cpu.h"

#define GHASH_PMULL_TARGET __attribute__((target("+crypto")))
#define GHASH_PMULL_INLINE GHASH_PMULL_TARGET inline __attribute__((always_inline))

namespace smcrypt::internal {
namespace {

alignas(16) constexpr uint8_t kReverse16[16] = {15, 14, 13, 12, 11, 10, 9, 8,
                                                7,  6,  5,  4,  3,  2,  1, 0};
constexpr uint64_t kPolyHi = 0xc200000000000000ULL;

GHASH_PMULL_INLINE uint64x2_t PmullLo(uint64x2_t a, uint64x2_t b) {
  return vreinterpretq_u64_p128(
      vmull_p64(static_cast<poly64_t>(vgetq_lane_u64(a, 0)), static_cast<poly64_t>(vgetq_lane_u64(b, 0))));
}

GHASH_PMULL_INLINE uint64x2_t PmullHi(uint64x2_t a, uint64x2_t b) {
  return vreinterpretq_u64_p128(vmull_high_p64(vreinterpretq_p64_u64(a), vreinterpretq_p64_u64(b)));
}

// Folded returns a vector with lo ⊕ hi of `a` in both lanes.
GHASH_PMULL_INLINE uint64x2_t Folded(uint64x2_t a) { return veorq_u64(a, vextq_u64(a, a, 1)); }

// Acc is an unreduced 256-bit sum of products: lo, hi and the Karatsuba middle term.
struct Acc {
  uint64x2_t lo, hi, mid;
};

// Mul adds a·k to `acc`; kk holds k.lo ⊕ k.hi in lane L (0: PMULL, 1: PMULL2).
template <int L>
GHASH_PMULL_INLINE void Mul(Acc& acc, uint64x2_t a, uint64x2_t k, uint64x2_t kk) {
  acc.lo = veorq_u64(acc.lo, PmullLo(a, k));
  acc.hi = veorq_u64(acc.hi, PmullHi(a, k));
  const uint64x2_t af = Folded(a);
  acc.mid = veorq_u64(acc.mid, L == 0 ? PmullLo(af, kk) : PmullHi(af, kk));
}

// Reduce returns (hi·x^128 + mid·x^64 + lo)·x^−128 modulo the POLYVAL polynomial, where
// mid is first turned from the Karatsuba term into the middle product.
GHASH_PMULL_INLINE uint64x2_t Reduce(const Acc& acc) {
  const uint64x2_t zero = vdupq_n_u64(0);
  const uint64x2_t mid = veorq_u64(acc.mid, veorq_u64(acc.lo, acc.hi));
  uint64x2_t lo = veorq_u64(acc.lo, vextq_u64(zero, mid, 1));  // ⊕ mid·x^64 (low part)
  const uint64x2_t hi = veorq_u64(acc.hi, vextq_u64(mid, zero, 1));
  const uint64x2_t poly = vdupq_n_u64(kPolyHi);
  lo = veorq_u64(vextq_u64(lo, lo, 1), PmullLo(lo, poly));
  lo = veorq_u64(vextq_u64(lo, lo, 1), PmullLo(lo, poly));
  return veorq_u64(lo, hi);
}

GHASH_PMULL_INLINE uint64x2_t Dot(uint64x2_t a, uint64x2_t b) {
  const uint64x2_t zero = vdupq_n_u64(0);
  Acc acc{zero, zero, zero};
  Mul<0>(acc, a, b, Folded(b));
  return Reduce(acc);
}

GHASH_PMULL_INLINE uint64x2_t LoadBlock(const uint8_t* p, uint8x16_t rev) {
  return vreinterpretq_u64_u8(vqtbl1q_u8(vld1q_u8(p), rev));
}

GHASH_PMULL_TARGET void GhashInitPmull(GhashKey* key, const uint8_t h[kGhashBlockSize]) {
  *key = GhashKey();
  // H' = mulX(rev H): shift the 128-bit value left by one and fold the carry back in.
  uint64_t hi = LoadBe64(h), lo = LoadBe64(h + 8);
  const uint64_t carry = 0 - (hi >> 63);
  hi = (hi << 1) | (lo >> 63);
  lo <<= 1;
  hi ^= carry & kPolyHi;
  lo ^= carry & 1;
  const uint64x2_t h1 = {lo, hi};
  uint64x2_t k = h1;
  for (int i = 1; i <= 8; ++i) {
    vst1q_u64(key->words + 2 * (8 - i), k);
    key->words[16 + (8 - i)] = vgetq_lane_u64(k, 0) ^ vgetq_lane_u64(k, 1);
    k = Dot(k, h1);
  }
}

GHASH_PMULL_TARGET void GhashUpdatePmull(uint8_t y[kGhashBlockSize], const GhashKey& key,
                                         const uint8_t* data, size_t num_blocks) {
  const uint8x16_t rev = vld1q_u8(kReverse16);
  const uint64x2_t zero = vdupq_n_u64(0);
  uint64x2_t acc = LoadBlock(y, rev);
  // k[s] = K_{8−s}; kk[p] = (K_{8−2p} folded, K_{7−2p} folded).
  uint64x2_t k[8], kk[4];
  #pragma GCC unroll 8
  for (int s = 0; s < 8; ++s) k[s] = vld1q_u64(key.words + 2 * s);
  #pragma GCC unroll 8
  for (int p = 0; p < 4; ++p) kk[p] = vld1q_u64(key.words + 16 + 2 * p);
  for (; num_blocks >= 8; num_blocks -= 8, data += 128) {
    Acc a{zero, zero, zero};
    Mul<0>(a, veorq_u64(acc, LoadBlock(data, rev)), k[0], kk[0]);
    Mul<1>(a, LoadBlock(data + 16, rev), k[1], kk[0]);
    Mul<0>(a, LoadBlock(data + 32, rev), k[2], kk[1]);
    Mul<1>(a, LoadBlock(data + 48, rev), k[3], kk[1]);
    Mul<0>(a, LoadBlock(data + 64, rev), k[4], kk[2]);
    Mul<1>(a, LoadBlock(data + 80, rev), k[5], kk[2]);
    Mul<0>(a, LoadBlock(data + 96, rev), k[6], kk[3]);
    Mul<1>(a, LoadBlock(data + 112, rev), k[7], kk[3]);
    acc = Reduce(a);
  }
  if (num_blocks >= 4) {
    Acc a{zero, zero, zero};
    Mul<0>(a, veorq_u64(acc, LoadBlock(data, rev)), k[4], kk[2]);
    Mul<1>(a, LoadBlock(data + 16, rev), k[5], kk[2]);
    Mul<0>(a, LoadBlock(data + 32, rev), k[6], kk[3]);
    Mul<1>(a, LoadBlock(data + 48, rev), k[7], kk[3]);
    acc = Reduce(a);
    num_blocks -= 4;
    data += 64;
  }
  for (; num_blocks > 0; --num_blocks, data += 16) {
    Acc a{zero, zero, zero};
    Mul<1>(a, veorq_u64(acc, LoadBlock(data, rev)), k[7], kk[3]);
    acc = Reduce(a);
  }
  vst1q_u8(y, vqtbl1q_u8(vreinterpretq_u8_u64(acc), rev));
}

}  // namespace

extern const GhashKernels kGhashPmull = {
    "pmull",
    kCpuPmull | kCpuAsimd,
    &GhashInitPmull,
    &GhashUpdatePmull,
};

}  // namespace smcrypt::internal

