// sm3_mb4_neon.cc — multi-buffer SM3: four independent messages side by side in Advanced
// SIMD (NEON) registers (GB/T 32905-2016 §5.3), with the compression of sm3_mb_impl.inc;
// the arm64 batch back end for CPUs without the SM3 instructions (Kunpeng 920, Phytium,
// Cortex-A72/A76/N1).
//
// Instructions: ADD, EOR, BSL (Maj and Choose in one instruction each), SHL + SRI
//   (rotates), TBL with a constant index (the rotate by 8 inside P1), REV32 (the byte
//   order), TRN1/TRN2 on 32- and 64-bit elements (the transpose), LD1/ST1.
// CPU features: kCpuAsimd. ASIMD is part of the armv8-a baseline that the compiler
//   targets by default, so these functions need no target attribute and the file no
//   -march flag; the dispatch table still names the feature.
// Technique: each step loads one 64-byte block per lane and transposes four 4×4 word
//   matrices (TRN1/TRN2 on .4s, then on .2d). Batch width: 4 messages.
//
// Constant-time review. Secret: the message words (HMAC keys, the SM2 KDF input Z and
//   the shared point) and the chaining values. No table lookup in memory: the one TBL
//   takes a constant index vector, so it is a fixed permutation of the data register.
//   Every load and store address is a lane pointer plus the public block offset, or the
//   state array at fixed offsets. Branches test block counts only (sm3_mb_impl.inc,
//   Sm3RunLanes). ADD, EOR, BSL, shifts, TBL, REV32 and TRN are among the Advanced SIMD
//   instructions the Arm ARM (DDI 0487, FEAT_DIT) lists as data-independent in timing
//   when PSTATE.DIT is set; that they are so otherwise is assumed, not measured.
//   tests/arm64/check_disassembly.py checks the object code for register-offset loads
//   and stores (a table lookup in memory).
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/cpu.h"

#define SM3_MB_TARGET
#define SM3_MB_INLINE inline __attribute__((always_inline))

namespace smcrypt {
namespace {

struct MbOps {
  using V = uint32x4_t;
  static constexpr size_t kLanes = 4;
  static SM3_MB_INLINE V Load(const uint32_t* p) { return vld1q_u32(p); }
  static SM3_MB_INLINE void Store(uint32_t* p, V v) { vst1q_u32(p, v); }
  static SM3_MB_INLINE V Zero() { return vdupq_n_u32(0); }
  static SM3_MB_INLINE V Set1(uint32_t w) { return vdupq_n_u32(w); }
  static SM3_MB_INLINE V Add(V x, V y) { return vaddq_u32(x, y); }
  static SM3_MB_INLINE V Xor(V x, V y) { return veorq_u32(x, y); }
  static SM3_MB_INLINE V Xor3(V x, V y, V z) { return veorq_u32(veorq_u32(x, y), z); }
  // Maj(x, y, z) = (x ∧ y) ∨ (x ∧ z) ∨ (y ∧ z): where x and y differ the majority is z,
  // where they agree it is x, so Maj = BSL(x ⊕ y, z, x). Choose(x, y, z) = BSL(x, y, z).
  static SM3_MB_INLINE V Maj(V x, V y, V z) { return vbslq_u32(veorq_u32(x, y), z, x); }
  static SM3_MB_INLINE V Choose(V x, V y, V z) { return vbslq_u32(x, y, z); }
  template <int n>
  static SM3_MB_INLINE V Rol(V x) {
    return vsriq_n_u32(vshlq_n_u32(x, n), x, 32 - n);
  }
  // P1Core(x, P1Const()) is x ⊕ (x <<< 15) ⊕ (x <<< 23), with rol23 = rol8 ∘ rol15 done
  // as a byte permutation (P1Const is the TBL index of rol8 on each 32-bit lane).
  static SM3_MB_INLINE V P1Const() {
    static constexpr uint8_t kRol8[16] = {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14};
    return vreinterpretq_u32_u8(vld1q_u8(kRol8));
  }
  static SM3_MB_INLINE V P1Core(V x, V rol8) {
    const V x15 = Rol<15>(x);
    const V x23 = vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(x15), vreinterpretq_u8_u32(rol8)));
    return Xor3(x, x15, x23);
  }

  static inline void LoadTransposed(const uint8_t* const* ptrs, size_t offset, V w[16]) {
    for (int q = 0; q < 4; ++q) {
      // r[i] = big-endian words 4q..4q+3 of lane i's block.
      V r[4];
      for (int i = 0; i < 4; ++i) {
        r[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(ptrs[i] + offset + 16 * q)));
      }
      // 4×4 transpose: t0 = (r0[0], r1[0], r0[2], r1[2]), t1 = (r0[1], r1[1], r0[3], r1[3]),
      // likewise t2/t3 from r2/r3; then the 64-bit halves are interleaved.
      const V t0 = vtrn1q_u32(r[0], r[1]);
      const V t1 = vtrn2q_u32(r[0], r[1]);
      const V t2 = vtrn1q_u32(r[2], r[3]);
      const V t3 = vtrn2q_u32(r[2], r[3]);
      w[4 * q + 0] = vreinterpretq_u32_u64(
          vtrn1q_u64(vreinterpretq_u64_u32(t0), vreinterpretq_u64_u32(t2)));
      w[4 * q + 1] = vreinterpretq_u32_u64(
          vtrn1q_u64(vreinterpretq_u64_u32(t1), vreinterpretq_u64_u32(t3)));
      w[4 * q + 2] = vreinterpretq_u32_u64(
          vtrn2q_u64(vreinterpretq_u64_u32(t0), vreinterpretq_u64_u32(t2)));
      w[4 * q + 3] = vreinterpretq_u32_u64(
          vtrn2q_u64(vreinterpretq_u64_u32(t1), vreinterpretq_u64_u32(t3)));
    }
  }
};

#include "crypto/sm3/sm3_mb_impl.inc"

}  // namespace

const Sm3Kernels kSm3Mb4Neon = MbKernels("mb4_neon", kCpuAsimd);

}  // namespace smcrypt
