// sm4_neon.cc — SM4 (GB/T 32907-2016 §6–§7) with Advanced SIMD (NEON): the arm64 back
// end for CPUs without the SM4 instructions (Kunpeng 920, Phytium, Cortex-A72/A76/N1).
//
// Instructions: TBL/TBX on four registers (the S-box), SUB, EOR, SHL/SRI, REV32, TBL
//   (byte rotations), LD4/ST4 (transpose on load and store), LD1R (round keys).
// CPU features: kCpuAsimd. ASIMD is part of the armv8-a baseline that the compiler
//   targets by default, so these functions need no target attribute and the file no
//   -march flag; the dispatch table still names the feature.
// Technique: four blocks per group, transposed by LD4 so that register j holds word j
//   of four blocks and a round is four-lane arithmetic on 32-bit lanes. τ (§6.2.1) is a
//   lookup of each byte in the 256-byte S-box held in 16 q-registers: TBL over the first
//   64-byte quarter, then three TBX over the others with the index lowered by 64 each
//   time (TBL gives 0 and TBX leaves the destination unchanged for an index ≥ 64, so
//   each byte is taken from exactly one quarter). L (§6.2.2) is
//   B ⊕ (B <<< 24) ⊕ ((B ⊕ (B <<< 8) ⊕ (B <<< 16)) <<< 2), the byte rotations by TBL
//   and REV32.8H, the rotation by 2 by SHL + SRI.
// Batch widths: 8 blocks (two groups in flight) for ECB, CTR-32, CTR-128 and CBC
//   decryption, then one group of 4, then the last 1–3 blocks in one group through a
//   zero-padded stack buffer (wiped after use). CBC encryption and the CBC-MAC are
//   serial: one block broadcast to the four lanes of a group (the same latency as a
//   group, the shortest this technique has).
//
// Constant-time review. Secret: the round keys, the data, the chaining values and the
//   counter blocks. The S-box is applied by TBL/TBX, which index registers, not memory:
//   the table is loaded whole (256 bytes, at fixed offsets) before any data is touched.
//   Every load and store address is a buffer pointer plus an immediate or a
//   post-increment by the public block count; round keys are read at fixed offsets.
//   Branches test block counts only. The CTR-128 carry is a lane mask (CMHI/CMEQ), not
//   a branch. Arm does not document per-instruction timing for TBL/TBX; the Arm ARM
//   (DDI 0487, FEAT_DIT) lists the Advanced SIMD logical, shift, permute and table
//   instructions among those whose timing is data-independent when PSTATE.DIT is set,
//   and no core is known to vary their timing with the data otherwise. That is assumed
//   here, not measured. tests/arm64/check_disassembly.py checks the object code
//   for register-offset loads and stores (a table lookup in memory).

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "crypto/common/bytes.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"
#include "smcrypt/secure_zero.h"

#define SM4_NEON_INLINE inline __attribute__((always_inline))

namespace smcrypt {
namespace {

// The S-box of GB/T 32907-2016 §6.2.1, row by row (row = high nibble of the input).
alignas(64) constexpr uint8_t kSbox[256] = {
    0xd6, 0x90, 0xe9, 0xfe, 0xcc, 0xe1, 0x3d, 0xb7, 0x16, 0xb6, 0x14, 0xc2, 0x28, 0xfb, 0x2c, 0x05,
    0x2b, 0x67, 0x9a, 0x76, 0x2a, 0xbe, 0x04, 0xc3, 0xaa, 0x44, 0x13, 0x26, 0x49, 0x86, 0x06, 0x99,
    0x9c, 0x42, 0x50, 0xf4, 0x91, 0xef, 0x98, 0x7a, 0x33, 0x54, 0x0b, 0x43, 0xed, 0xcf, 0xac, 0x62,
    0xe4, 0xb3, 0x1c, 0xa9, 0xc9, 0x08, 0xe8, 0x95, 0x80, 0xdf, 0x94, 0xfa, 0x75, 0x8f, 0x3f, 0xa6,
    0x47, 0x07, 0xa7, 0xfc, 0xf3, 0x73, 0x17, 0xba, 0x83, 0x59, 0x3c, 0x19, 0xe6, 0x85, 0x4f, 0xa8,
    0x68, 0x6b, 0x81, 0xb2, 0x71, 0x64, 0xda, 0x8b, 0xf8, 0xeb, 0x0f, 0x4b, 0x70, 0x56, 0x9d, 0x35,
    0x1e, 0x24, 0x0e, 0x5e, 0x63, 0x58, 0xd1, 0xa2, 0x25, 0x22, 0x7c, 0x3b, 0x01, 0x21, 0x78, 0x87,
    0xd4, 0x00, 0x46, 0x57, 0x9f, 0xd3, 0x27, 0x52, 0x4c, 0x36, 0x02, 0xe7, 0xa0, 0xc4, 0xc8, 0x9e,
    0xea, 0xbf, 0x8a, 0xd2, 0x40, 0xc7, 0x38, 0xb5, 0xa3, 0xf7, 0xf2, 0xce, 0xf9, 0x61, 0x15, 0xa1,
    0xe0, 0xae, 0x5d, 0xa4, 0x9b, 0x34, 0x1a, 0x55, 0xad, 0x93, 0x32, 0x30, 0xf5, 0x8c, 0xb1, 0xe3,
    0x1d, 0xf6, 0xe2, 0x2e, 0x82, 0x66, 0xca, 0x60, 0xc0, 0x29, 0x23, 0xab, 0x0d, 0x53, 0x4e, 0x6f,
    0xd5, 0xdb, 0x37, 0x45, 0xde, 0xfd, 0x8e, 0x2f, 0x03, 0xff, 0x6a, 0x72, 0x6d, 0x6c, 0x5b, 0x51,
    0x8d, 0x1b, 0xaf, 0x92, 0xbb, 0xdd, 0xbc, 0x7f, 0x11, 0xd9, 0x5c, 0x41, 0x1f, 0x10, 0x5a, 0xd8,
    0x0a, 0xc1, 0x31, 0x88, 0xa5, 0xcd, 0x7b, 0xbd, 0x2d, 0x74, 0xd0, 0x12, 0xb8, 0xe5, 0xb4, 0xb0,
    0x89, 0x69, 0x97, 0x4a, 0x0c, 0x96, 0x77, 0x7e, 0x65, 0xb9, 0xf1, 0x09, 0xc5, 0x6e, 0xc6, 0x84,
    0x18, 0xf0, 0x7d, 0xec, 0x3a, 0xdc, 0x4d, 0x20, 0x79, 0xee, 0x5f, 0x3e, 0xd7, 0xcb, 0x39, 0x48,
};

// kRotl8 rotates each 32-bit lane left by 8 bits (little-endian lanes: byte k of the
// result is byte k−1 mod 4 of the input).
alignas(16) constexpr uint8_t kRotl8[16] = {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14};

// Sbox is the S-box in 16 registers: q[i] is the 64-byte quarter i.
struct Sbox {
  uint8x16x4_t q[4];
};

SM4_NEON_INLINE Sbox LoadSbox() {
  Sbox s;
  s.q[0] = vld1q_u8_x4(kSbox);
  s.q[1] = vld1q_u8_x4(kSbox + 64);
  s.q[2] = vld1q_u8_x4(kSbox + 128);
  s.q[3] = vld1q_u8_x4(kSbox + 192);
  return s;
}

// Tau applies the S-box to each of the 16 bytes of x.
SM4_NEON_INLINE uint8x16_t Tau(const Sbox& s, uint8x16_t x) {
  const uint8x16_t k64 = vdupq_n_u8(64);
  uint8x16_t r = vqtbl4q_u8(s.q[0], x);
  x = vsubq_u8(x, k64);
  r = vqtbx4q_u8(r, s.q[1], x);
  x = vsubq_u8(x, k64);
  r = vqtbx4q_u8(r, s.q[2], x);
  x = vsubq_u8(x, k64);
  return vqtbx4q_u8(r, s.q[3], x);
}

// Round returns a ⊕ T(b ⊕ c ⊕ d ⊕ k), T = L ∘ τ (§6.2), on four lanes.
SM4_NEON_INLINE uint32x4_t Round(const Sbox& s, uint8x16_t rotl8, uint32x4_t a, uint32x4_t b,
                                 uint32x4_t c, uint32x4_t d, uint32x4_t k) {
  const uint8x16_t x = vreinterpretq_u8_u32(veorq_u32(veorq_u32(b, c), veorq_u32(d, k)));
  const uint8x16_t t8 = Tau(s, x);
  const uint32x4_t t = vreinterpretq_u32_u8(t8);
  const uint8x16_t r8 = vqtbl1q_u8(t8, rotl8);                              // t <<< 8
  const uint32x4_t r16 = vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u8(t8)));
  const uint32x4_t r24 =
      vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u8(r8)));         // t <<< 24
  const uint32x4_t m = veorq_u32(veorq_u32(t, vreinterpretq_u32_u8(r8)), r16);
  const uint32x4_t m2 = vsriq_n_u32(vshlq_n_u32(m, 2), m, 30);              // m <<< 2
  return veorq_u32(veorq_u32(a, t), veorq_u32(r24, m2));
}

// Group is four blocks, transposed: w[j] holds word j (a big-endian word of the block,
// as a value) of each of the four blocks.
struct Group {
  uint32x4_t w[4];
};

SM4_NEON_INLINE uint32x4_t Rev32(uint32x4_t a) {
  return vreinterpretq_u32_u8(vrev32q_u8(vreinterpretq_u8_u32(a)));
}

// LoadRaw de-interleaves 64 bytes: lane i of val[j] is bytes 16i+4j … 16i+4j+3.
SM4_NEON_INLINE uint32x4x4_t LoadRaw(const uint8_t* p) {
  return vld4q_u32(reinterpret_cast<const uint32_t*>(p));
}

SM4_NEON_INLINE Group LoadGroup(const uint8_t* p) {
  const uint32x4x4_t v = LoadRaw(p);
  return Group{{Rev32(v.val[0]), Rev32(v.val[1]), Rev32(v.val[2]), Rev32(v.val[3])}};
}

// Output returns the cipher output R(X32, X33, X34, X35) = (X35, X34, X33, X32) of the
// rounds' result in the raw (byte) layout of LoadRaw.
SM4_NEON_INLINE uint32x4x4_t Output(const Group& g) {
  uint32x4x4_t v;
  v.val[0] = Rev32(g.w[3]);
  v.val[1] = Rev32(g.w[2]);
  v.val[2] = Rev32(g.w[1]);
  v.val[3] = Rev32(g.w[0]);
  return v;
}

SM4_NEON_INLINE void StoreRaw(uint8_t* p, const uint32x4x4_t& v) {
  vst4q_u32(reinterpret_cast<uint32_t*>(p), v);
}

SM4_NEON_INLINE uint32x4x4_t XorRaw(const uint32x4x4_t& a, const uint32x4x4_t& b) {
  uint32x4x4_t r;
  #pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) r.val[j] = veorq_u32(a.val[j], b.val[j]);
  return r;
}

// Crypt runs the 32 rounds (§7.1) on G groups at once, four rounds per iteration so the
// four words change roles without moves: after it, w[0..3] hold X32 … X35.
template <int G>
SM4_NEON_INLINE void Crypt(const Sbox& s, const uint32_t rk[32], Group (&g)[G]) {
  const uint8x16_t rotl8 = vld1q_u8(kRotl8);
#pragma GCC unroll 1
  for (int r = 0; r < 32; r += 4) {
    const uint32x4_t k0 = vld1q_dup_u32(rk + r);
    #pragma GCC unroll 4
    for (int i = 0; i < G; ++i) g[i].w[0] = Round(s, rotl8, g[i].w[0], g[i].w[1], g[i].w[2], g[i].w[3], k0);
    const uint32x4_t k1 = vld1q_dup_u32(rk + r + 1);
    #pragma GCC unroll 4
    for (int i = 0; i < G; ++i) g[i].w[1] = Round(s, rotl8, g[i].w[1], g[i].w[2], g[i].w[3], g[i].w[0], k1);
    const uint32x4_t k2 = vld1q_dup_u32(rk + r + 2);
    #pragma GCC unroll 4
    for (int i = 0; i < G; ++i) g[i].w[2] = Round(s, rotl8, g[i].w[2], g[i].w[3], g[i].w[0], g[i].w[1], k2);
    const uint32x4_t k3 = vld1q_dup_u32(rk + r + 3);
    #pragma GCC unroll 4
    for (int i = 0; i < G; ++i) g[i].w[3] = Round(s, rotl8, g[i].w[3], g[i].w[0], g[i].w[1], g[i].w[2], k3);
  }
}

// Tail runs `f(in, out)` on whole groups of a zero-padded 64-byte copy of the last
// `n` (1–3) blocks, writes the n blocks back and wipes the copy.
template <typename F>
SM4_NEON_INLINE void Tail(const uint8_t* in, uint8_t* out, size_t n, F f) {
  alignas(16) uint8_t buf[64] = {};
  std::memcpy(buf, in, 16 * n);
  f(buf, buf);
  std::memcpy(out, buf, 16 * n);
  SecureZero(buf, sizeof(buf));
}

// --- ECB -----------------------------------------------------------------------------

void Sm4NeonEncryptBlocks(const uint32_t rk[32], const uint8_t* in, uint8_t* out,
                          size_t num_blocks) {
  const Sbox s = LoadSbox();
  for (; num_blocks >= 8; num_blocks -= 8, in += 128, out += 128) {
    Group g[2] = {LoadGroup(in), LoadGroup(in + 64)};
    Crypt<2>(s, rk, g);
    StoreRaw(out, Output(g[0]));
    StoreRaw(out + 64, Output(g[1]));
  }
  const auto one = [&](const uint8_t* i, uint8_t* o) {
    Group g[1] = {LoadGroup(i)};
    Crypt<1>(s, rk, g);
    StoreRaw(o, Output(g[0]));
  };
  if (num_blocks >= 4) {
    one(in, out);
    num_blocks -= 4, in += 64, out += 64;
  }
  if (num_blocks > 0) Tail(in, out, num_blocks, one);
}

// --- CTR -----------------------------------------------------------------------------

// Counter128 is a 16-byte counter block as two big-endian 64-bit halves.
struct Counter128 {
  uint64_t hi, lo;
};

// Add128 returns c + n modulo 2^128; the carry is arithmetic, not a branch.
SM4_NEON_INLINE Counter128 Add128(Counter128 c, uint64_t n) {
  const uint64_t lo = c.lo + n;
  return Counter128{c.hi + static_cast<uint64_t>(lo < n), lo};
}

// CounterGroup32 builds four counter blocks c0 ‖ c1 ‖ c2 ‖ (c3 + j + i), i = 0..3.
SM4_NEON_INLINE Group CounterGroup32(const uint32_t c[4], uint32_t j) {
  const uint32x4_t lane = {0, 1, 2, 3};
  return Group{{vdupq_n_u32(c[0]), vdupq_n_u32(c[1]), vdupq_n_u32(c[2]),
                vaddq_u32(vdupq_n_u32(c[3] + j), lane)}};
}

// CounterGroup128 builds the four counter blocks c + i, i = 0..3, modulo 2^128: the
// carry out of each word is a lane mask (all ones), subtracted from the next word.
SM4_NEON_INLINE Group CounterGroup128(Counter128 c) {
  const uint32x4_t lane = {0, 1, 2, 3};
  const uint32x4_t w3 = vaddq_u32(vdupq_n_u32(static_cast<uint32_t>(c.lo)), lane);
  const uint32x4_t c3 = vcltq_u32(w3, lane);
  const uint32x4_t w2 = vsubq_u32(vdupq_n_u32(static_cast<uint32_t>(c.lo >> 32)), c3);
  const uint32x4_t c2 = vandq_u32(c3, vceqzq_u32(w2));
  const uint32x4_t w1 = vsubq_u32(vdupq_n_u32(static_cast<uint32_t>(c.hi)), c2);
  const uint32x4_t c1 = vandq_u32(c2, vceqzq_u32(w1));
  const uint32x4_t w0 = vsubq_u32(vdupq_n_u32(static_cast<uint32_t>(c.hi >> 32)), c1);
  return Group{{w0, w1, w2, w3}};
}

// CtrBlocks encrypts counter groups from `make(j)` (j = index of the group's first
// block) and XORs them into `in`.
template <typename MakeGroup>
SM4_NEON_INLINE void CtrBlocks(const Sbox& s, const uint32_t rk[32], const uint8_t* in,
                               uint8_t* out, size_t num_blocks, MakeGroup make) {
  size_t j = 0;
  for (; num_blocks >= 8; num_blocks -= 8, in += 128, out += 128, j += 8) {
    Group g[2] = {make(j), make(j + 4)};
    Crypt<2>(s, rk, g);
    StoreRaw(out, XorRaw(LoadRaw(in), Output(g[0])));
    StoreRaw(out + 64, XorRaw(LoadRaw(in + 64), Output(g[1])));
  }
  const auto one = [&](const uint8_t* i, uint8_t* o) {
    Group g[1] = {make(j)};
    Crypt<1>(s, rk, g);
    StoreRaw(o, XorRaw(LoadRaw(i), Output(g[0])));
  };
  if (num_blocks >= 4) {
    one(in, out);
    num_blocks -= 4, in += 64, out += 64, j += 4;
  }
  if (num_blocks > 0) Tail(in, out, num_blocks, one);
}

void Sm4NeonCtr32EncryptBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                               const uint8_t* in, uint8_t* out, size_t num_blocks) {
  const Sbox s = LoadSbox();
  uint32_t c[4];
  #pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) c[i] = LoadBe32(counter_block + 4 * i);
  CtrBlocks(s, rk, in, out, num_blocks,
            [&](size_t j) { return CounterGroup32(c, static_cast<uint32_t>(j)); });
  SecureZero(c, sizeof(c));
}

void Sm4NeonCtr128EncryptBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                                const uint8_t* in, uint8_t* out, size_t num_blocks) {
  const Sbox s = LoadSbox();
  const Counter128 c{LoadBe64(counter_block), LoadBe64(counter_block + 8)};
  CtrBlocks(s, rk, in, out, num_blocks,
            [&](size_t j) { return CounterGroup128(Add128(c, j)); });
}

// --- CBC -----------------------------------------------------------------------------

// CbcDecryptGroups decrypts G groups at `in` to `out`, XORing C_{i−1} (from `prev`,
// 64·G bytes: the chaining value then the first 4G−1 ciphertext blocks).
template <int G>
SM4_NEON_INLINE void CbcDecryptGroups(const Sbox& s, const uint32_t rk[32],
                                      const uint8_t* prev, const uint8_t* in, uint8_t* out) {
  Group g[G];
  #pragma GCC unroll 4
  for (int i = 0; i < G; ++i) g[i] = LoadGroup(in + 64 * i);
  Crypt<G>(s, rk, g);
  #pragma GCC unroll 4
  for (int i = 0; i < G; ++i) StoreRaw(out + 64 * i, XorRaw(LoadRaw(prev + 64 * i), Output(g[i])));
}

void Sm4NeonCbcDecryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                             uint8_t* out, size_t num_blocks) {
  const Sbox s = LoadSbox();
  // prev is C_{i−1} for the blocks of one batch, read before `out` (maybe `in`) is written.
  alignas(16) uint8_t prev[128];
  std::memcpy(prev, iv, 16);
  for (; num_blocks >= 8; num_blocks -= 8, in += 128, out += 128) {
    std::memcpy(prev + 16, in, 112);
    uint8_t next[16];
    std::memcpy(next, in + 112, 16);
    CbcDecryptGroups<2>(s, rk, prev, in, out);
    std::memcpy(prev, next, 16);
  }
  if (num_blocks >= 4) {
    std::memcpy(prev + 16, in, 48);
    uint8_t next[16];
    std::memcpy(next, in + 48, 16);
    CbcDecryptGroups<1>(s, rk, prev, in, out);
    std::memcpy(prev, next, 16);
    num_blocks -= 4, in += 64, out += 64;
  }
  if (num_blocks > 0) {
    alignas(16) uint8_t buf[64] = {};
    std::memcpy(buf, in, 16 * num_blocks);
    std::memcpy(prev + 16, buf, 48);
    std::memcpy(iv, buf + 16 * (num_blocks - 1), 16);
    CbcDecryptGroups<1>(s, rk, prev, buf, buf);
    std::memcpy(out, buf, 16 * num_blocks);
    SecureZero(buf, sizeof(buf));
  } else {
    std::memcpy(iv, prev, 16);
  }
}

// EncryptOne encrypts the block `x` (raw bytes) with all four lanes of one group
// carrying it, and returns the ciphertext block.
SM4_NEON_INLINE uint8x16_t EncryptOne(const Sbox& s, const uint32_t rk[32], uint8x16_t x) {
  const uint32x4_t w = Rev32(vreinterpretq_u32_u8(x));
  Group g[1] = {{{vdupq_laneq_u32(w, 0), vdupq_laneq_u32(w, 1), vdupq_laneq_u32(w, 2),
                  vdupq_laneq_u32(w, 3)}}};
  Crypt<1>(s, rk, g);
  // Lane 0 of X35, X34, X33, X32, in that order.
  const uint32x4_t hi = vzip1q_u32(g[0].w[3], g[0].w[2]);
  const uint32x4_t lo = vzip1q_u32(g[0].w[1], g[0].w[0]);
  const uint64x2_t r = vzip1q_u64(vreinterpretq_u64_u32(hi), vreinterpretq_u64_u32(lo));
  return vreinterpretq_u8_u32(Rev32(vreinterpretq_u32_u64(r)));
}

void Sm4NeonCbcEncryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                             uint8_t* out, size_t num_blocks) {
  const Sbox s = LoadSbox();
  uint8x16_t c = vld1q_u8(iv);
  for (; num_blocks > 0; --num_blocks, in += 16, out += 16) {
    c = EncryptOne(s, rk, veorq_u8(c, vld1q_u8(in)));
    vst1q_u8(out, c);
  }
  vst1q_u8(iv, c);
}

void Sm4NeonCbcMacBlocks(const uint32_t rk[32], uint8_t y[16], const uint8_t* in,
                         size_t num_blocks) {
  const Sbox s = LoadSbox();
  uint8x16_t c = vld1q_u8(y);
  for (; num_blocks > 0; --num_blocks, in += 16) c = EncryptOne(s, rk, veorq_u8(c, vld1q_u8(in)));
  vst1q_u8(y, c);
}

}  // namespace

extern const Sm4Kernels kSm4Neon = {
    /*name=*/"neon",
    /*required_features=*/kCpuAsimd,
    /*parallel_blocks=*/8,
    /*encrypt_blocks=*/Sm4NeonEncryptBlocks,
    /*ctr32_encrypt_blocks=*/Sm4NeonCtr32EncryptBlocks,
    /*ctr128_encrypt_blocks=*/Sm4NeonCtr128EncryptBlocks,
    /*cbc_decrypt_blocks=*/Sm4NeonCbcDecryptBlocks,
    /*cbc_encrypt_blocks=*/Sm4NeonCbcEncryptBlocks,
    /*cbc_mac_blocks=*/Sm4NeonCbcMacBlocks,
    /*cbc_encrypt_multi=*/nullptr,
    /*cbc_mac_multi=*/nullptr,
    /*gcm_crypt_fused=*/nullptr,
    /*gcm_fused_ghash=*/nullptr,
};

}  // namespace smcrypt

