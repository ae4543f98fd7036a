// sm3_ce.cc — single-stream SM3 compression function CF (GB/T 32905-2016 §5.3) with the
// Armv8.2 SM3 instructions (FEAT_SM3).
//
// Instructions: SM3PARTW1/SM3PARTW2 (message expansion), SM3SS1, SM3TT1A/SM3TT1B and
// SM3TT2A/SM3TT2B (rounds), with Advanced SIMD loads, REV32, EXT and EOR around them
// (Arm ARM DDI 0487, C7.2 "SM3PARTW1" … "SM3TT2B"). CPU features: kCpuSm3 | kCpuAsimd.
// gcc 12 declares these intrinsics under `arch=armv8.2-a+sm4` (its `+sm4` covers both
// FEAT_SM3 and FEAT_SM4; there is no `+sm3`), and a function marked only `+sm4` cannot
// inline them, so the target string here is "arch=armv8.2-a+sm4": FEAT_SM3 is an
// Armv8.2 extension, so a CPU that has it implements Armv8.2 too.
// Technique: the state is held as two vectors, {D, C, B, A} and {H, G, F, E} (lane 3 =
// A, E), the layout SM3TT1x and SM3TT2x read and write. Each round j is three
// instructions and a load: SM3SS1 gives SS1 from A, E and T_j <<< j (§5.3.3); SM3TT1x
// gives the new A..D from SS1, W'_j and FF_j (A: XOR, B: majority); SM3TT2x gives the new
// E..H from SS1, W_j and GG_j, including P0 and the <<< 9 / <<< 19 of B and F. W_0..W_67
// are computed four at a time (§5.3.2) by SM3PARTW1 (the P1 of W_{j-16} ⊕ W_{j-9} ⊕
// (W_{j-3} <<< 15), lane 3 using lane 0's partial result) and SM3PARTW2 (⊕ (W_{j-13} <<<
// 7) ⊕ W_{j-6}, and the correction of lane 3 through P1's linearity); W'_j = W_j ⊕
// W_{j+4} is one EOR per four rounds. The 64 rounds are fully unrolled; each round's
// constant is one 16-byte load from a table indexed by the round number.
// Batch width: one block at a time (a single stream is serial across blocks).
//
// Constant time: SM3 has no tables indexed by data, and this file has no branch or
// memory index that depends on data; the only branches are on the public block count,
// and the only table (the round constants) is indexed by the round number. What is
// secret here is the message and, under HMAC-SM3 and the KDF (sm3_internal.h), the
// chaining value derived from the key or shared secret. The SM3 instructions are fixed
// functions of their register operands (Arm ARM pseudocode: no data-dependent exception
// or early exit). With PSTATE.DIT = 1 (FEAT_DIT) the Arm ARM requires their execution
// time to be independent of the data (they are in its list of cryptographic
// instructions affected by DIT); with DIT = 0 it makes no statement. This file does not
// set DIT (no smcrypt back end does), so the property rests on the implementations:
// Arm's optimization guides give each SM3 instruction one latency and throughput, with
// no data-dependent case, and no published measurement shows otherwise. The message,
// the expanded words and the chaining values stay in vector registers: the function as
// gcc 12 -O2 compiles it has no stack frame (no spill; objdump shows no access to sp).
// As in the other back ends, registers are not cleared on return.
#include <cstddef>
#include <cstdint>

#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/cpu.h"

#include <arm_neon.h>

#define SM3_CE_TARGET __attribute__((target("arch=armv8.2-a+sm4")))

namespace smcrypt {
namespace {

// kT[4j + 3] = T_j <<< (j mod 32) (§4.2, §5.3.3), with lanes 0..2 zero: SM3SS1 reads only
// lane 3, so each round loads its constant as one 16-byte vector.
constexpr uint32_t RolC(uint32_t x, int n) { return n == 0 ? x : (x << n) | (x >> (32 - n)); }
constexpr uint32_t TjRot(int j) { return RolC(j < 16 ? 0x79cc4519u : 0x7a879d8au, j % 32); }
struct RoundConstants {
  uint32_t v[256];
};
constexpr RoundConstants MakeRoundConstants() {
  RoundConstants t{};
  for (int j = 0; j < 64; ++j) t.v[4 * j + 3] = TjRot(j);
  return t;
}
alignas(16) constexpr RoundConstants kT = MakeRoundConstants();

// LoadGroup reads four big-endian message words W_4k..W_4k+3 into lanes 0..3.
SM3_CE_TARGET inline uint32x4_t LoadGroup(const uint8_t* p) {
  return vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p)));
}

// ExpandGroup returns W_j..W_j+3 (§5.3.2, j = 4k, 4 <= k <= 16) from the four groups
// before it: g0 = W_{j-16..j-13}, g1 = W_{j-12..j-9}, g2 = W_{j-8..j-5}, g3 =
// W_{j-4..j-1}.
SM3_CE_TARGET inline uint32x4_t ExpandGroup(uint32x4_t g0, uint32x4_t g1, uint32x4_t g2,
                                            uint32x4_t g3) {
  const uint32x4_t w9 = vextq_u32(g1, g2, 3);   // W_{j-9..j-6}
  const uint32x4_t w13 = vextq_u32(g0, g1, 3);  // W_{j-13..j-10}
  const uint32x4_t w6 = vextq_u32(g2, g3, 2);   // W_{j-6..j-3}
  // SM3PARTW1 reads W_{j-3..j-1} from lanes 1..3 of g3 (and W_j from its own lane 0).
  return vsm3partw2q_u32(vsm3partw1q_u32(g0, w9, g3), w6, w13);
}

// One round of §5.3.3: J is the round number, I the lane of W_J in `w` and of W'_J in
// `wp`, TT1 and TT2 the A (rounds 0..15) or B (16..63) forms.
#define SM3_CE_ROUND(J, I, TT1, TT2)                                     \
  do {                                                                   \
    const uint32x4_t ss1 = vsm3ss1q_u32(abcd, efgh, vld1q_u32(t + 4 * (J))); \
    abcd = TT1(abcd, ss1, wp, I);                                        \
    efgh = TT2(efgh, ss1, w, I);                                         \
  } while (0)

// AFTER(x, y) makes the compiler treat x as computed after y (it emits no instruction).
// Without it, gcc 12's scheduler hoists the message expansion to the start of the
// block, runs out of the 32 vector registers, and spills expanded words and chaining
// values to the stack.
#define AFTER(x, y) __asm__("" : "+w"(x) : "w"(y))

// Four rounds J..J+3 on group g[J/4] (W_J..W_J+3, and W'_J..W'_J+3 = g[J/4] ⊕ g[J/4 + 1]),
// then g[J/4 + 4] when the message expansion still needs it (J/4 + 4 <= 16); it is first
// read three groups later. Expanding after the rounds lets SM3PARTW1 overwrite g[J/4]
// in place, its last use.
#define SM3_CE_ROUND4(J, TT1, TT2)                                                        \
  do {                                                                                    \
    uint32x4_t w = g[(J) / 4];                                                            \
    const uint32x4_t wp = veorq_u32(w, g[(J) / 4 + 1]);                                   \
    SM3_CE_ROUND((J) + 0, 0, TT1, TT2);                                                   \
    SM3_CE_ROUND((J) + 1, 1, TT1, TT2);                                                   \
    SM3_CE_ROUND((J) + 2, 2, TT1, TT2);                                                   \
    SM3_CE_ROUND((J) + 3, 3, TT1, TT2);                                                   \
    if ((J) / 4 + 4 <= 16) {                                                              \
      AFTER(w, abcd);                                                                     \
      g[(J) / 4 + 4] = ExpandGroup(w, g[(J) / 4 + 1], g[(J) / 4 + 2], g[(J) / 4 + 3]);    \
    }                                                                                     \
  } while (0)

// Reverse4 turns lanes {x0, x1, x2, x3} into {x3, x2, x1, x0}.
SM3_CE_TARGET inline uint32x4_t Reverse4(uint32x4_t x) {
  const uint32x4_t r = vrev64q_u32(x);  // {x1, x0, x3, x2}
  return vextq_u32(r, r, 2);
}

SM3_CE_TARGET void Sm3CeCompressBlocks(uint32_t state[8], const uint8_t* data,
                                       size_t num_blocks) {
  // state[0..3] = A..D and state[4..7] = E..H, reversed into {D, C, B, A}, {H, G, F, E}.
  uint32x4_t abcd = Reverse4(vld1q_u32(state));
  uint32x4_t efgh = Reverse4(vld1q_u32(state + 4));
  for (size_t blk = 0; blk < num_blocks; ++blk, data += 64) {
    // The constants are read through `t`, which the compiler cannot see through (in each
    // block, so the loads are not hoisted out of the loop and spilled): each round is
    // one LDR (or half an LDP) from the table instead of a literal (ADRP + LDR).
    const uint32_t* t = kT.v;
    __asm__("" : "+r"(t));
    uint32x4_t g[17];  // g[k] = W_4k..W_4k+3, in registers (the indices are constants)
    g[0] = LoadGroup(data);
    g[1] = LoadGroup(data + 16);
    g[2] = LoadGroup(data + 32);
    g[3] = LoadGroup(data + 48);
    const uint32x4_t abcd0 = abcd, efgh0 = efgh;
    SM3_CE_ROUND4(0, vsm3tt1aq_u32, vsm3tt2aq_u32);
    SM3_CE_ROUND4(4, vsm3tt1aq_u32, vsm3tt2aq_u32);
    SM3_CE_ROUND4(8, vsm3tt1aq_u32, vsm3tt2aq_u32);
    SM3_CE_ROUND4(12, vsm3tt1aq_u32, vsm3tt2aq_u32);
    SM3_CE_ROUND4(16, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(20, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(24, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(28, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(32, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(36, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(40, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(44, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(48, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(52, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(56, vsm3tt1bq_u32, vsm3tt2bq_u32);
    SM3_CE_ROUND4(60, vsm3tt1bq_u32, vsm3tt2bq_u32);
    // V_{i+1} = ABCDEFGH ⊕ V_i (§5.3.3).
    abcd = veorq_u32(abcd, abcd0);
    efgh = veorq_u32(efgh, efgh0);
  }
  vst1q_u32(state, Reverse4(abcd));
  vst1q_u32(state + 4, Reverse4(efgh));
}

#undef SM3_CE_ROUND
#undef SM3_CE_ROUND4
#undef AFTER

}  // namespace

const Sm3Kernels kSm3Ce = {
    /*name=*/"ce",
    /*required_features=*/kCpuSm3 | kCpuAsimd,
    /*compress_blocks=*/Sm3CeCompressBlocks,
    /*batch=*/nullptr,
    /*lanes=*/0,
    /*hash_jobs=*/nullptr,
};

}  // namespace smcrypt

