// sm4_generic.cc — portable, constant-time SM4 (GB/T 32907-2016 §6–§7).
//
// Instructions: plain C++ on 32- and 64-bit integers (and, xor, shifts, rotates); no
// CPU features required. Batch width: 16 blocks (64 S-box lanes) per pass.
//
// Constant time: no lookup table anywhere. The S-box is computed by a boolean circuit
// on bit planes ("bitslicing"), every branch and every memory index depends only on
// the round number and the public block count.
//
// Technique: the SM4 S-box is affine–inverse–affine (Liu, Ji, Hu, Zhang, "Algebraic
// structure of the SM4 S-box"):
//
//     S(x) = A · I(A · x ⊕ 0xD3) ⊕ 0xD3,
//
// where I is inversion in GF(2^8) = GF(2)[t]/(t^8+t^7+t^6+t^5+t^4+t^2+1) (I(0) = 0), and
// A is the 8×8 bit matrix whose row i (output bit i, bit j = input bit j, bit 0 the
// least significant) is {a7, 4f, 9e, 3d, 7a, f4, e9, d3}[i]. Inversion is cheap in a
// tower field GF((2^4)^2): with GF(16) = GF(2)[z]/(z^4+z+1) and GF(256)' =
// GF(16)[Y]/(Y^2+Y+λ), λ = z^3+1, an element h·Y + l has inverse
//
//     (h·Y + h + l) · Δ^{-1},   Δ = λ·h^2 + h·l + l^2 ∈ GF(16),   Δ^{-1} = Δ^14,
//
// which costs five GF(16) multiplications (16 AND + 15 XOR each) plus a few linear
// maps. The field isomorphism φ (t ↦ β = 0x8E, a root of the SM4 field polynomial in
// the tower field; tower bytes are h<<4 | l) is folded into the two affine maps:
//
//     S(x) = (A·φ^{-1}) · I'((φ·A) · x ⊕ φ(0xD3)) ⊕ 0xD3,
//
// giving kInRows/kInConst and kOutRows/kOutConst below. The test
// tests/crypto/sm4/sm4_sbox_test.cc checks this circuit against the standard's S-box
// table (§6.2.1) on all 256 inputs, through both packings.
//
// Bit planes: plane k holds bit k of every S-box input byte. For one or two words the
// bytes are used in place (plane k = (q >> k) & 0x0101…01, lanes 8 bits apart); for up
// to 16 words (the four bytes of X1⊕X2⊕X3⊕rk of 16 blocks) three layers of SWAPMOVE
// transpose eight 64-bit registers into eight planes of 64 lanes (Käsper–Schwabe).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt {
namespace {

constexpr size_t kBatchBlocks = 16;

// --- GF(2)-linear and GF(16) building blocks on bit planes ---------------------------

// Dot returns the XOR of the planes x[j] for the bits j set in the constant kRow.
template <uint8_t kRow, typename W>
inline W Dot(const W x[8]) {
  W r = 0;
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    if ((kRow >> j) & 1) r ^= x[j];  // branch on a compile-time constant only
  }
  return r;
}

// Ones returns all-ones when bit `i` of the constant kC is set (XOR-ing it adds the
// constant's bit to that plane), else 0.
template <uint8_t kC, int i, typename W>
inline constexpr W Ones() {
  return ((kC >> i) & 1) ? static_cast<W>(~W{0}) : W{0};
}

// Affine8 sets out = M·in ⊕ c for the 8×8 bit matrix with rows r0..r7 and constant c.
template <uint8_t r0, uint8_t r1, uint8_t r2, uint8_t r3, uint8_t r4, uint8_t r5,
          uint8_t r6, uint8_t r7, uint8_t c, typename W>
inline void Affine8(const W in[8], W out[8]) {
  out[0] = Dot<r0>(in) ^ Ones<c, 0, W>();
  out[1] = Dot<r1>(in) ^ Ones<c, 1, W>();
  out[2] = Dot<r2>(in) ^ Ones<c, 2, W>();
  out[3] = Dot<r3>(in) ^ Ones<c, 3, W>();
  out[4] = Dot<r4>(in) ^ Ones<c, 4, W>();
  out[5] = Dot<r5>(in) ^ Ones<c, 5, W>();
  out[6] = Dot<r6>(in) ^ Ones<c, 6, W>();
  out[7] = Dot<r7>(in) ^ Ones<c, 7, W>();
}

// Gf16Mul sets c = a·b in GF(2)[z]/(z^4+z+1) (z^4 = z+1, z^5 = z^2+z, z^6 = z^3+z^2).
template <typename W>
inline void Gf16Mul(const W a[4], const W b[4], W c[4]) {
  const W d0 = a[0] & b[0];
  const W d1 = (a[0] & b[1]) ^ (a[1] & b[0]);
  const W d2 = (a[0] & b[2]) ^ (a[1] & b[1]) ^ (a[2] & b[0]);
  const W d3 = (a[0] & b[3]) ^ (a[1] & b[2]) ^ (a[2] & b[1]) ^ (a[3] & b[0]);
  const W d4 = (a[1] & b[3]) ^ (a[2] & b[2]) ^ (a[3] & b[1]);
  const W d5 = (a[2] & b[3]) ^ (a[3] & b[2]);
  const W d6 = a[3] & b[3];
  c[0] = d0 ^ d4;
  c[1] = d1 ^ d4 ^ d5;
  c[2] = d2 ^ d5 ^ d6;
  c[3] = d3 ^ d6;
}

// Gf16Sq sets c = a^2 (linear: a0 + a1 z^2 + a2 z^4 + a3 z^6).
template <typename W>
inline void Gf16Sq(const W a[4], W c[4]) {
  c[0] = a[0] ^ a[2];
  c[1] = a[2];
  c[2] = a[1] ^ a[3];
  c[3] = a[3];
}

// SboxPlanes replaces the eight planes x[0..7] (bit k of every lane in x[k]) with the
// planes of S(x), lane by lane. See the header block for the derivation.
template <typename W>
inline void SboxPlanes(W x[8]) {
  // Into the tower field: t = (φ·A)·x ⊕ φ(0xD3); t[0..3] = l, t[4..7] = h.
  W t[8];
  Affine8<0xf0, 0x72, 0xd6, 0x18, 0x93, 0x40, 0xc4, 0x7f, 0xaf>(x, t);
  const W* l = t;
  const W* h = t + 4;
  // Δ = λ·h^2 + h·l + l^2, λ = z^3 + 1 (λ·h^2 has rows {1, a, 8, 5}).
  W hl[4], l2[4], d[4];
  Gf16Mul(h, l, hl);
  Gf16Sq(l, l2);
  d[0] = h[0] ^ hl[0] ^ l2[0];
  d[1] = h[1] ^ h[3] ^ hl[1] ^ l2[1];
  d[2] = h[3] ^ hl[2] ^ l2[2];
  d[3] = h[0] ^ h[2] ^ hl[3] ^ l2[3];
  // Δ^{-1} = Δ^14 = Δ^12 · Δ^2 (0 maps to 0).
  W d2[4], d3[4], d6[4], d12[4], di[4];
  Gf16Sq(d, d2);
  Gf16Mul(d2, d, d3);
  Gf16Sq(d3, d6);
  Gf16Sq(d6, d12);
  Gf16Mul(d12, d2, di);
  // I'(h·Y + l) = (h·Δ^{-1})·Y + (h + l)·Δ^{-1}.
  W inv[8];
  const W hxl[4] = {h[0] ^ l[0], h[1] ^ l[1], h[2] ^ l[2], h[3] ^ l[3]};
  Gf16Mul(hxl, di, inv);
  Gf16Mul(h, di, inv + 4);
  // Back out of the tower field and apply the output affine map: (A·φ^{-1})·inv ⊕ 0xD3.
  Affine8<0x33, 0x65, 0x14, 0xb5, 0x8a, 0x2a, 0x07, 0x29, 0xd3>(inv, x);
}

// --- Packing words into bit planes ----------------------------------------------------

constexpr uint64_t kLaneMask = 0x0101010101010101;

// Tau2 applies τ to two words at once (8 lanes, 8 bits apart, in one 64-bit register).
inline void Tau2(uint32_t* w0, uint32_t* w1) {
  const uint64_t q = uint64_t{*w0} | (uint64_t{*w1} << 32);
  uint64_t p[8];
  for (int k = 0; k < 8; ++k) p[k] = (q >> k) & kLaneMask;
  SboxPlanes(p);
  uint64_t r = 0;
  for (int k = 0; k < 8; ++k) r |= (p[k] & kLaneMask) << k;
  *w0 = static_cast<uint32_t>(r);
  *w1 = static_cast<uint32_t>(r >> 32);
}

// SwapMove exchanges the bits of `b` selected by `mask` with those of `a` selected by
// `mask << n`.
inline void SwapMove(uint64_t& a, uint64_t& b, uint64_t mask, int n) {
  const uint64_t t = ((a >> n) ^ b) & mask;
  b ^= t;
  a ^= t << n;
}

// Transpose turns eight registers of eight bytes into eight bit planes (register k then
// holds bit k of all 64 bytes). Applying the layers in the reverse order undoes it.
inline void TransposeForward(uint64_t r[8]) {
  for (int i = 0; i < 8; i += 2) SwapMove(r[i], r[i + 1], 0x5555555555555555, 1);
  for (int i : {0, 1, 4, 5}) SwapMove(r[i], r[i + 2], 0x3333333333333333, 2);
  for (int i = 0; i < 4; ++i) SwapMove(r[i], r[i + 4], 0x0f0f0f0f0f0f0f0f, 4);
}
inline void TransposeBack(uint64_t r[8]) {
  for (int i = 0; i < 4; ++i) SwapMove(r[i], r[i + 4], 0x0f0f0f0f0f0f0f0f, 4);
  for (int i : {0, 1, 4, 5}) SwapMove(r[i], r[i + 2], 0x3333333333333333, 2);
  for (int i = 0; i < 8; i += 2) SwapMove(r[i], r[i + 1], 0x5555555555555555, 1);
}

// Tau16 applies τ to the 16 words w[0..15] (64 lanes).
inline void Tau16(uint32_t w[16]) {
  uint64_t r[8];
  for (int g = 0; g < 8; ++g) r[g] = uint64_t{w[2 * g]} | (uint64_t{w[2 * g + 1]} << 32);
  TransposeForward(r);
  SboxPlanes(r);
  TransposeBack(r);
  for (int g = 0; g < 8; ++g) {
    w[2 * g] = static_cast<uint32_t>(r[g]);
    w[2 * g + 1] = static_cast<uint32_t>(r[g] >> 32);
  }
}

// L is the linear transform of the round function (§6.2.2).
inline uint32_t L(uint32_t b) {
  return b ^ Rotl32(b, 2) ^ Rotl32(b, 10) ^ Rotl32(b, 18) ^ Rotl32(b, 24);
}

// CryptBatch runs the 32 rounds (§7.1) on 1 ≤ n ≤ 16 blocks. Blocks are loaded before
// any is stored, so `in == out` is fine.
void CryptBatch(const uint32_t rk[32], const uint8_t* in, uint8_t* out, size_t n) {
  // x[i % 4][j] is X_i of block j (the state is a sliding window of four words).
  uint32_t x[4][kBatchBlocks] = {};
  uint32_t u[kBatchBlocks] = {};
  for (size_t j = 0; j < n; ++j) {
    for (int i = 0; i < 4; ++i) x[i][j] = LoadBe32(in + 16 * j + 4 * i);
  }
  for (int r = 0; r < 32; ++r) {
    const uint32_t* x1 = x[(r + 1) % 4];
    const uint32_t* x2 = x[(r + 2) % 4];
    const uint32_t* x3 = x[(r + 3) % 4];
    for (size_t j = 0; j < n; ++j) u[j] = x1[j] ^ x2[j] ^ x3[j] ^ rk[r];
    if (n <= 2) {
      Tau2(&u[0], &u[1]);
    } else {
      Tau16(u);
    }
    // X_{r+4} = X_r ⊕ L(τ(X_{r+1} ⊕ X_{r+2} ⊕ X_{r+3} ⊕ rk_r)).
    uint32_t* x0 = x[r % 4];
    for (size_t j = 0; j < n; ++j) x0[j] ^= L(u[j]);
  }
  // Output R(X_32, X_33, X_34, X_35) = (X_35, X_34, X_33, X_32) (§7.1).
  for (size_t j = 0; j < n; ++j) {
    for (int i = 0; i < 4; ++i) StoreBe32(out + 16 * j + 4 * i, x[3 - i][j]);
  }
  SecureZero(x, sizeof(x));
  SecureZero(u, sizeof(u));
}

}  // namespace

uint32_t Sm4GenericTau(uint32_t a) {
  uint32_t unused = 0;
  Tau2(&a, &unused);
  return a;
}

void Sm4GenericTau16(uint32_t w[16]) { Tau16(w); }

void Sm4GenericEncryptBlocks(const uint32_t rk[32], const uint8_t* in, uint8_t* out,
                             size_t num_blocks) {
  while (num_blocks > 0) {
    const size_t n = num_blocks < kBatchBlocks ? num_blocks : kBatchBlocks;
    CryptBatch(rk, in, out, n);
    in += 16 * n;
    out += 16 * n;
    num_blocks -= n;
  }
}

void Sm4GenericCtr32EncryptBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                                  const uint8_t* in, uint8_t* out, size_t num_blocks) {
  uint8_t ks[16 * kBatchBlocks];
  uint32_t ctr = LoadBe32(counter_block + 12);
  while (num_blocks > 0) {
    const size_t n = num_blocks < kBatchBlocks ? num_blocks : kBatchBlocks;
    for (size_t j = 0; j < n; ++j) {
      std::memcpy(ks + 16 * j, counter_block, 12);
      StoreBe32(ks + 16 * j + 12, ctr + static_cast<uint32_t>(j));  // inc32, mod 2^32
    }
    CryptBatch(rk, ks, ks, n);
    for (size_t i = 0; i < 16 * n; ++i) out[i] = in[i] ^ ks[i];
    ctr += static_cast<uint32_t>(n);
    in += 16 * n;
    out += 16 * n;
    num_blocks -= n;
  }
  SecureZero(ks, sizeof(ks));
}

void Sm4GenericCtr128EncryptBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                                   const uint8_t* in, uint8_t* out, size_t num_blocks) {
  uint8_t ks[16 * kBatchBlocks];
  uint64_t hi = LoadBe64(counter_block);
  uint64_t lo = LoadBe64(counter_block + 8);
  while (num_blocks > 0) {
    const size_t n = num_blocks < kBatchBlocks ? num_blocks : kBatchBlocks;
    for (size_t j = 0; j < n; ++j) {
      StoreBe64(ks + 16 * j, hi);
      StoreBe64(ks + 16 * j + 8, lo);
      lo += 1;
      hi += CtIsZero64(lo) & 1;  // carry into the high 64 bits, without a branch
    }
    CryptBatch(rk, ks, ks, n);
    for (size_t i = 0; i < 16 * n; ++i) out[i] = in[i] ^ ks[i];
    in += 16 * n;
    out += 16 * n;
    num_blocks -= n;
  }
  SecureZero(ks, sizeof(ks));
}

void Sm4GenericCbcDecryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                                uint8_t* out, size_t num_blocks) {
  uint8_t c[16 * kBatchBlocks];
  uint8_t p[16 * kBatchBlocks];
  while (num_blocks > 0) {
    const size_t n = num_blocks < kBatchBlocks ? num_blocks : kBatchBlocks;
    std::memcpy(c, in, 16 * n);  // kept: `out` may overwrite `in`
    CryptBatch(rk, c, p, n);
    for (size_t i = 0; i < 16; ++i) out[i] = p[i] ^ iv[i];
    for (size_t i = 16; i < 16 * n; ++i) out[i] = p[i] ^ c[i - 16];
    std::memcpy(iv, c + 16 * (n - 1), 16);
    in += 16 * n;
    out += 16 * n;
    num_blocks -= n;
  }
  SecureZero(p, sizeof(p));
}

void Sm4GenericCbcEncryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                                uint8_t* out, size_t num_blocks) {
  uint8_t b[16];
  for (size_t j = 0; j < num_blocks; ++j, in += 16, out += 16) {
    for (size_t i = 0; i < 16; ++i) b[i] = in[i] ^ iv[i];
    CryptBatch(rk, b, iv, 1);
    std::memcpy(out, iv, 16);
  }
  SecureZero(b, sizeof(b));
}

void Sm4GenericCbcMacBlocks(const uint32_t rk[32], uint8_t y[16], const uint8_t* in,
                            size_t num_blocks) {
  for (size_t j = 0; j < num_blocks; ++j, in += 16) {
    for (size_t i = 0; i < 16; ++i) y[i] ^= in[i];
    CryptBatch(rk, y, y, 1);
  }
}

}  // namespace smcrypt
