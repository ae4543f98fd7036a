// sm4_ce.cc — SM4 (GB/T 32907-2016 §6–§7) with the Armv8.2 SM4 instructions
// (FEAT_SM4): Yitian 710, Neoverse-class cores that implement it.
//
// Instructions: SM4E (four rounds of §7.1 on one block per instruction), REV32, TBL
//   (the output word and byte reversal), ADD/SUB/CMEQ/EXT (counters), EOR, LD1/ST1.
// CPU features: kCpuSm4 and kCpuAsimd. Every function carries
//   __attribute__((target("arch=armv8.2-a+sm4"))): FEAT_SM4 is an Armv8.2 option, and
//   gcc 12's arm_neon.h declares vsm4eq_u32 under exactly that target (its "sm4"
//   extension enables the SM3 and SM4 instructions). Nothing else in the binary is
//   built for Armv8.2 or FEAT_SM4.
// Technique: a block is one register of four 32-bit lanes X_i … X_{i+3} (words as
//   values: REV32 after the load); SM4E with four round keys in a register advances it
//   by four rounds, so 8 SM4Es encrypt a block. SM4E's result depends on its input, so
//   one block is a chain of 8; independent blocks are interleaved to fill the pipeline.
//   The key schedule stays in the generic code (once per key).
// Batch widths: 8 blocks for ECB, CTR-32, CTR-128 and CBC decryption, then 4, then 1.
//   CBC encryption and the CBC-MAC are serial, one block at a time (8 SM4Es deep).
//
// Constant-time review. Secret: the round keys, the data, the chaining values and the
//   counter blocks. There is no table in memory: the S-box is inside SM4E. Every load
//   and store address is a buffer pointer plus an immediate or a post-increment by the
//   public block count; the round keys are loaded at fixed offsets. Branches test
//   block counts only; the CTR-128 carry is a lane mask (CMEQ), not a branch. Arm lists
//   the SM4 instructions among those with data-independent timing when PSTATE.DIT is
//   set (Arm ARM DDI 0487, FEAT_DIT); smcrypt does not set DIT, and assumes, as for the
//   AES instructions, that the cores implementing FEAT_SM4 do not vary SM4E's timing
//   with its operands. Not measured. tests/arm64/check_disassembly.py checks
//   the object code for register-offset loads and stores.

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "crypto/common/bytes.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"

#define SM4_CE_TARGET __attribute__((target("arch=armv8.2-a+sm4")))
#define SM4_CE_INLINE SM4_CE_TARGET inline __attribute__((always_inline))

namespace smcrypt {
namespace {

// kReverse16 reverses the 16 bytes of a register: from lanes X32 … X35 (values) to the
// output block X35 ‖ X34 ‖ X33 ‖ X32 (big-endian words), §7.1's R.
alignas(16) constexpr uint8_t kReverse16[16] = {15, 14, 13, 12, 11, 10, 9, 8,
                                                7,  6,  5,  4,  3,  2,  1, 0};

// RoundKeys holds the 32 round keys, four per register.
struct RoundKeys {
  uint32x4_t k[8];
};

SM4_CE_INLINE RoundKeys LoadRoundKeys(const uint32_t rk[32]) {
  RoundKeys r;
  #pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r.k[i] = vld1q_u32(rk + 4 * i);
  return r;
}

SM4_CE_INLINE uint32x4_t Words(uint8x16_t block) {
  return vreinterpretq_u32_u8(vrev32q_u8(block));
}

// Crypt runs the 32 rounds on N blocks (word form) at once and returns the output
// blocks as bytes.
template <int N>
SM4_CE_INLINE void Crypt(const RoundKeys& r, uint8x16_t rev, uint32x4_t (&x)[N],
                         uint8x16_t (&out)[N]) {
  #pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    #pragma GCC unroll 8
    for (int i = 0; i < N; ++i) x[i] = vsm4eq_u32(x[i], r.k[j]);
  }
  #pragma GCC unroll 8
  for (int i = 0; i < N; ++i) out[i] = vqtbl1q_u8(vreinterpretq_u8_u32(x[i]), rev);
}

// --- ECB -----------------------------------------------------------------------------

template <int N>
SM4_CE_INLINE void EcbN(const RoundKeys& r, uint8x16_t rev, const uint8_t* in, uint8_t* out) {
  uint32x4_t x[N];
  uint8x16_t y[N];
  #pragma GCC unroll 8
  for (int i = 0; i < N; ++i) x[i] = Words(vld1q_u8(in + 16 * i));
  Crypt<N>(r, rev, x, y);
  #pragma GCC unroll 8
  for (int i = 0; i < N; ++i) vst1q_u8(out + 16 * i, y[i]);
}

SM4_CE_TARGET void Sm4CeEncryptBlocks(const uint32_t rk[32], const uint8_t* in, uint8_t* out,
                                      size_t num_blocks) {
  const RoundKeys r = LoadRoundKeys(rk);
  const uint8x16_t rev = vld1q_u8(kReverse16);
  for (; num_blocks >= 8; num_blocks -= 8, in += 128, out += 128) EcbN<8>(r, rev, in, out);
  if (num_blocks >= 4) {
    EcbN<4>(r, rev, in, out);
    num_blocks -= 4, in += 64, out += 64;
  }
  for (; num_blocks > 0; --num_blocks, in += 16, out += 16) EcbN<1>(r, rev, in, out);
}

// --- CTR -----------------------------------------------------------------------------

// Ctr32 holds the counter block in word form; Next returns it and adds 1 to word 3
// modulo 2^32 (inc32).
struct Ctr32 {
  uint32x4_t c;
  SM4_CE_INLINE uint32x4_t Next() {
    const uint32x4_t one = {0, 0, 0, 1};
    const uint32x4_t v = c;
    c = vaddq_u32(c, one);
    return v;
  }
};

// Ctr128 holds the counter block as a little-endian 128-bit value [low 64, high 64];
// Next returns it in word form and adds 1 modulo 2^128, the carry out of the low half
// a lane mask moved to the high lane and subtracted.
struct Ctr128 {
  uint64x2_t c;
  SM4_CE_INLINE uint32x4_t Next() {
    const uint32x4_t w = vrev64q_u32(vreinterpretq_u32_u64(c));  // [w2, w3, w0, w1]
    const uint32x4_t v = vextq_u32(w, w, 2);                      // [w0, w1, w2, w3]
    const uint64x2_t one = {1, 0};
    c = vaddq_u64(c, one);
    const uint64x2_t carry = vextq_u64(vdupq_n_u64(0), vceqzq_u64(c), 1);  // [0, lo == 0]
    c = vsubq_u64(c, carry);
    return v;
  }
};

template <int N, typename Ctr>
SM4_CE_INLINE void CtrN(const RoundKeys& r, uint8x16_t rev, Ctr& ctr, const uint8_t* in,
                        uint8_t* out) {
  uint32x4_t x[N];
  uint8x16_t y[N];
  #pragma GCC unroll 8
  for (int i = 0; i < N; ++i) x[i] = ctr.Next();
  Crypt<N>(r, rev, x, y);
  #pragma GCC unroll 8
  for (int i = 0; i < N; ++i) vst1q_u8(out + 16 * i, veorq_u8(vld1q_u8(in + 16 * i), y[i]));
}

template <typename Ctr>
SM4_CE_INLINE void CtrBlocks(const uint32_t rk[32], Ctr ctr, const uint8_t* in, uint8_t* out,
                             size_t num_blocks) {
  const RoundKeys r = LoadRoundKeys(rk);
  const uint8x16_t rev = vld1q_u8(kReverse16);
  for (; num_blocks >= 8; num_blocks -= 8, in += 128, out += 128) CtrN<8>(r, rev, ctr, in, out);
  if (num_blocks >= 4) {
    CtrN<4>(r, rev, ctr, in, out);
    num_blocks -= 4, in += 64, out += 64;
  }
  for (; num_blocks > 0; --num_blocks, in += 16, out += 16) CtrN<1>(r, rev, ctr, in, out);
}

SM4_CE_TARGET void Sm4CeCtr32EncryptBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                                           const uint8_t* in, uint8_t* out, size_t num_blocks) {
  CtrBlocks(rk, Ctr32{Words(vld1q_u8(counter_block))}, in, out, num_blocks);
}

SM4_CE_TARGET void Sm4CeCtr128EncryptBlocks(const uint32_t rk[32],
                                            const uint8_t counter_block[16], const uint8_t* in,
                                            uint8_t* out, size_t num_blocks) {
  const uint64x2_t c = {LoadBe64(counter_block + 8), LoadBe64(counter_block)};
  CtrBlocks(rk, Ctr128{c}, in, out, num_blocks);
}

// --- CBC -----------------------------------------------------------------------------

// CbcDecryptN decrypts N blocks; `prev` is C_{−1} on entry and the last of them on return.
template <int N>
SM4_CE_INLINE void CbcDecryptN(const RoundKeys& r, uint8x16_t rev, uint8x16_t& prev,
                               const uint8_t* in, uint8_t* out) {
  uint8x16_t c[N], y[N];
  uint32x4_t x[N];
  #pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    c[i] = vld1q_u8(in + 16 * i);
    x[i] = Words(c[i]);
  }
  Crypt<N>(r, rev, x, y);
  vst1q_u8(out, veorq_u8(y[0], prev));
  #pragma GCC unroll 8
  for (int i = 1; i < N; ++i) vst1q_u8(out + 16 * i, veorq_u8(y[i], c[i - 1]));
  prev = c[N - 1];
}

SM4_CE_TARGET void Sm4CeCbcDecryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                                         uint8_t* out, size_t num_blocks) {
  const RoundKeys r = LoadRoundKeys(rk);
  const uint8x16_t rev = vld1q_u8(kReverse16);
  uint8x16_t prev = vld1q_u8(iv);
  for (; num_blocks >= 8; num_blocks -= 8, in += 128, out += 128) {
    CbcDecryptN<8>(r, rev, prev, in, out);
  }
  if (num_blocks >= 4) {
    CbcDecryptN<4>(r, rev, prev, in, out);
    num_blocks -= 4, in += 64, out += 64;
  }
  for (; num_blocks > 0; --num_blocks, in += 16, out += 16) CbcDecryptN<1>(r, rev, prev, in, out);
  vst1q_u8(iv, prev);
}

SM4_CE_INLINE uint8x16_t EncryptOne(const RoundKeys& r, uint8x16_t rev, uint8x16_t block) {
  uint32x4_t x[1] = {Words(block)};
  uint8x16_t y[1];
  Crypt<1>(r, rev, x, y);
  return y[0];
}

SM4_CE_TARGET void Sm4CeCbcEncryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                                         uint8_t* out, size_t num_blocks) {
  const RoundKeys r = LoadRoundKeys(rk);
  const uint8x16_t rev = vld1q_u8(kReverse16);
  uint8x16_t c = vld1q_u8(iv);
  for (; num_blocks > 0; --num_blocks, in += 16, out += 16) {
    c = EncryptOne(r, rev, veorq_u8(c, vld1q_u8(in)));
    vst1q_u8(out, c);
  }
  vst1q_u8(iv, c);
}

SM4_CE_TARGET void Sm4CeCbcMacBlocks(const uint32_t rk[32], uint8_t y[16], const uint8_t* in,
                                     size_t num_blocks) {
  const RoundKeys r = LoadRoundKeys(rk);
  const uint8x16_t rev = vld1q_u8(kReverse16);
  uint8x16_t c = vld1q_u8(y);
  for (; num_blocks > 0; --num_blocks, in += 16) c = EncryptOne(r, rev, veorq_u8(c, vld1q_u8(in)));
  vst1q_u8(y, c);
}

}  // namespace

extern const Sm4Kernels kSm4Ce = {
    /*name=*/"ce",
    /*required_features=*/kCpuSm4 | kCpuAsimd,
    /*parallel_blocks=*/8,
    /*encrypt_blocks=*/Sm4CeEncryptBlocks,
    /*ctr32_encrypt_blocks=*/Sm4CeCtr32EncryptBlocks,
    /*ctr128_encrypt_blocks=*/Sm4CeCtr128EncryptBlocks,
    /*cbc_decrypt_blocks=*/Sm4CeCbcDecryptBlocks,
    /*cbc_encrypt_blocks=*/Sm4CeCbcEncryptBlocks,
    /*cbc_mac_blocks=*/Sm4CeCbcMacBlocks,
    /*cbc_encrypt_multi=*/nullptr,
    /*cbc_mac_multi=*/nullptr,
    /*gcm_crypt_fused=*/nullptr,
    /*gcm_fused_ghash=*/nullptr,
};

}  // namespace smcrypt

