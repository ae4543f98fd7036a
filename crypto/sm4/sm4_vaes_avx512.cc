// sm4_vaes_avx512.cc — SM4 (GB/T 32907-2016 §6–§7) with VAES on AVX-512 registers, for
// CPUs with VAES and AVX-512 but no GFNI (none shipped so far, but the features are
// separate CPUID bits, and SMCRYPT_CPU_DISABLE=gfni selects it on GFNI machines).
//
// Instructions: VAESENCLAST on zmm (four AES states per instruction), VPSHUFB nibble
//   tables, VPROLD, VPTERNLOGD, VPUNPCK*, VALIGNQ, masked loads/stores, VPCMPUD.
// CPU features: kCpuAvx512, kCpuVaes and kCpuAesni (the xmm serial path uses AESENCLAST).
// Technique: "S-box by AESENCLAST with pre/post affine maps" (the sm4ni construction):
//   S(x) = A2·AES-S(A1·x ⊕ c1) ⊕ c2, with A1 = ψ·A (ψ the field isomorphism of
//   sm4_gfni_avx512.cc) and A2 = A·ψ⁻¹·Aff_AES⁻¹. Each affine map is two VPSHUFB nibble
//   lookups in constant 16-byte tables; AESENCLAST with a zero round key applies
//   SubBytes after ShiftRows, which a VPSHUFB by InvShiftRows cancels beforehand.
// Layout, interleaving (64 blocks in flight), CTR counter generation and the xmm path
//   for tails and serial modes are those of sm4_gfni_avx512.cc.
//
// Multi-buffer CBC encryption / CBC-MAC: up to 16 independent messages, job j in lane
//   4(j mod 4) + ⌊j/4⌋ of the word registers, with per-lane round keys transposed once
//   per call; finished lanes are masked out (as in sm4_gfni_avx512.cc).
// Constant time: yes. VPSHUFB indexes a register with data, not memory; the tables are
//   constants in registers. AESENCLAST has data-independent latency. Branches, loop
//   counts, masks and addresses depend only on the public block count and pointers.
//   Multi-buffer: per-lane round keys are loaded whole each round (no lane-dependent
//   address); lanes whose job has ended are masked, the mask built from public lengths.
// How it is checked: valgrind 3.19 cannot decode AVX-512 or VAES, so this back end is
//   not run by the memcheck test (tests/ct/ct_valgrind_test.cc) but by the statistical
//   fixed-vs-random timing test tests/ct/ct_dudect_test.cc (dudect, label slow: Welch's
//   t on cropped RDTSCP timings, fails if |t| > 10). Review (issue 11): every branch
//   and loop in this file tests a block or job count, a compile-time parameter or a
//   pointer; no load or store address is computed from keys or data.
#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"
#include "smcrypt/secure_zero.h"

// GCC 12 warns that __m512i's alignment/aliasing attributes are dropped when it is a
// template argument (harmless: values live in registers), and flags the intentionally
// undefined pass-through operand inside its own AVX-512 headers.
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define SM4_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,vaes,aes")))
#define SM4_INLINE SM4_TARGET inline __attribute__((always_inline))

namespace smcrypt {
namespace {

// Nibble tables of the affine maps around the AES S-box (SM4's S(x) = A2(AES-S(A1(x)))):
// A1·x ⊕ c1 = kPreLo[x & 15] ⊕ kPreHi[x >> 4] (A1 = ψ·A, c1 = ψ(0xD3) = 0x3E), and
// A2·y ⊕ c2 = kPostLo[y & 15] ⊕ kPostHi[y >> 4] (A2 = A·ψ⁻¹·Aff_AES⁻¹, folding AES's own
// output affine map away). Checked against the standard's S-box through every back-end test.
#define SM4_PRE_LO 0x3e, 0xb2, 0x0e, 0x82, 0xbb, 0x37, 0x8b, 0x07, 0xa1, 0x2d, 0x91, 0x1d, 0x24, 0xa8, 0x14, 0x98
#define SM4_PRE_HI 0x00, 0xdc, 0x2e, 0xf2, 0xc5, 0x19, 0xeb, 0x37, 0x08, 0xd4, 0x26, 0xfa, 0xcd, 0x11, 0xe3, 0x3f
#define SM4_POST_LO 0x6c, 0xd4, 0xa6, 0x1e, 0x52, 0xea, 0x98, 0x20, 0x0b, 0xb3, 0xc1, 0x79, 0x35, 0x8d, 0xff, 0x47
#define SM4_POST_HI 0x00, 0xe0, 0x50, 0xb0, 0x9d, 0x7d, 0xcd, 0x2d, 0xc0, 0x20, 0x90, 0x70, 0x5d, 0xbd, 0x0d, 0xed
// InvShiftRows, applied before AESENCLAST so that its ShiftRows leaves bytes in place.
#define SM4_INV_SHIFT_ROWS 0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3

// --- One set of operations per register width (xmm: 4 lanes, zmm: 16 lanes) ---------

template <typename V>
struct Ops;

template <>
struct Ops<__m512i> {
  using V = __m512i;
  using Mask = __mmask16;
  static constexpr int kLanes = 4;  // blocks per register before the transpose
  // MakeMask selects the dwords of the first `blocks` blocks of a register.
  static SM4_INLINE Mask MakeMask(int blocks) { return static_cast<Mask>((1u << (4 * blocks)) - 1); }
  static SM4_INLINE V Set1(uint32_t w) { return _mm512_set1_epi32(static_cast<int>(w)); }
  static SM4_INLINE V Zero() { return _mm512_setzero_si512(); }
  static SM4_INLINE V Xor(V a, V b) { return _mm512_xor_si512(a, b); }
  static SM4_INLINE V Xor3(V a, V b, V c) { return _mm512_ternarylogic_epi32(a, b, c, 0x96); }
  template <int n>
  static SM4_INLINE V Rol(V a) {
    return _mm512_rol_epi32(a, n);
  }
  static SM4_INLINE V Affine(V x, __m128i lo_t, __m128i hi_t) {
    const V m = _mm512_set1_epi8(0x0f);
    const V lo = _mm512_and_si512(x, m);
    const V hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), m);
    return _mm512_xor_si512(_mm512_shuffle_epi8(_mm512_broadcast_i32x4(lo_t), lo),
                            _mm512_shuffle_epi8(_mm512_broadcast_i32x4(hi_t), hi));
  }
  static SM4_INLINE V Sbox(V x) {
    x = Affine(x, _mm_setr_epi8(SM4_PRE_LO), _mm_setr_epi8(SM4_PRE_HI));
    x = _mm512_shuffle_epi8(x, _mm512_broadcast_i32x4(_mm_setr_epi8(SM4_INV_SHIFT_ROWS)));
    x = _mm512_aesenclast_epi128(x, _mm512_setzero_si512());
    return Affine(x, _mm_setr_epi8(SM4_POST_LO), _mm_setr_epi8(SM4_POST_HI));
  }

  static SM4_INLINE V Bswap32(V a) {
    const __m128i m = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
    return _mm512_shuffle_epi8(a, _mm512_broadcast_i32x4(m));
  }
  static SM4_INLINE V UnpackLo32(V a, V b) { return _mm512_unpacklo_epi32(a, b); }
  static SM4_INLINE V UnpackHi32(V a, V b) { return _mm512_unpackhi_epi32(a, b); }
  static SM4_INLINE V UnpackLo64(V a, V b) { return _mm512_unpacklo_epi64(a, b); }
  static SM4_INLINE V UnpackHi64(V a, V b) { return _mm512_unpackhi_epi64(a, b); }
  static SM4_INLINE V Load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static SM4_INLINE void Store(uint8_t* p, V v) { _mm512_storeu_si512(p, v); }
  static SM4_INLINE V MaskLoad(Mask k, const uint8_t* p) { return _mm512_maskz_loadu_epi32(k, p); }
  static SM4_INLINE void MaskStore(uint8_t* p, Mask k, V v) { _mm512_mask_storeu_epi32(p, k, v); }
  static SM4_INLINE V Add32(V a, V b) { return _mm512_add_epi32(a, b); }
  static SM4_INLINE Mask LtU32(V a, V b) { return _mm512_cmplt_epu32_mask(a, b); }
  static SM4_INLINE Mask IsZeroAnd(Mask k, V a) { return _mm512_mask_cmpeq_epi32_mask(k, a, Zero()); }
  static SM4_INLINE V MaskAdd1(V a, Mask k) { return _mm512_mask_add_epi32(a, k, a, Set1(1)); }
  // Lane e = 4k + m of a transposed register holds block 4m + k (k: 128-bit lane).
  static SM4_INLINE V BlockIndex() {
    return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  }
  // PrevBlocks returns, for the register holding blocks 4m … 4m+3 at `p`, the blocks
  // one position earlier; `first` is the block before p (only its low lane is used).
  static SM4_INLINE V PrevBlocks(Mask k, const uint8_t* p, __m128i first) {
    return _mm512_alignr_epi64(MaskLoad(k, p), _mm512_broadcast_i32x4(first), 6);
  }
};

template <>
struct Ops<__m128i> {
  using V = __m128i;
  using Mask = __mmask8;
  static constexpr int kLanes = 1;
  static SM4_INLINE Mask MakeMask(int blocks) { return static_cast<Mask>((1u << (4 * blocks)) - 1); }
  static SM4_INLINE V Set1(uint32_t w) { return _mm_set1_epi32(static_cast<int>(w)); }
  static SM4_INLINE V Zero() { return _mm_setzero_si128(); }
  static SM4_INLINE V Xor(V a, V b) { return _mm_xor_si128(a, b); }
  static SM4_INLINE V Xor3(V a, V b, V c) { return _mm_ternarylogic_epi32(a, b, c, 0x96); }
  template <int n>
  static SM4_INLINE V Rol(V a) {
    return _mm_rol_epi32(a, n);
  }
  static SM4_INLINE V Affine(V x, __m128i lo_t, __m128i hi_t) {
    const V m = _mm_set1_epi8(0x0f);
    const V lo = _mm_and_si128(x, m);
    const V hi = _mm_and_si128(_mm_srli_epi16(x, 4), m);
    return _mm_xor_si128(_mm_shuffle_epi8(lo_t, lo), _mm_shuffle_epi8(hi_t, hi));
  }
  static SM4_INLINE V Sbox(V x) {
    x = Affine(x, _mm_setr_epi8(SM4_PRE_LO), _mm_setr_epi8(SM4_PRE_HI));
    x = _mm_shuffle_epi8(x, _mm_setr_epi8(SM4_INV_SHIFT_ROWS));
    x = _mm_aesenclast_si128(x, _mm_setzero_si128());
    return Affine(x, _mm_setr_epi8(SM4_POST_LO), _mm_setr_epi8(SM4_POST_HI));
  }

  static SM4_INLINE V Bswap32(V a) {
    return _mm_shuffle_epi8(a, _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
  }
  static SM4_INLINE V UnpackLo32(V a, V b) { return _mm_unpacklo_epi32(a, b); }
  static SM4_INLINE V UnpackHi32(V a, V b) { return _mm_unpackhi_epi32(a, b); }
  static SM4_INLINE V UnpackLo64(V a, V b) { return _mm_unpacklo_epi64(a, b); }
  static SM4_INLINE V UnpackHi64(V a, V b) { return _mm_unpackhi_epi64(a, b); }
  static SM4_INLINE V Load(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static SM4_INLINE void Store(uint8_t* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static SM4_INLINE V MaskLoad(Mask k, const uint8_t* p) { return _mm_maskz_loadu_epi32(k, p); }
  static SM4_INLINE void MaskStore(uint8_t* p, Mask k, V v) { _mm_mask_storeu_epi32(p, k, v); }
  static SM4_INLINE V Add32(V a, V b) { return _mm_add_epi32(a, b); }
  static SM4_INLINE Mask LtU32(V a, V b) { return _mm_cmplt_epu32_mask(a, b); }
  static SM4_INLINE Mask IsZeroAnd(Mask k, V a) { return _mm_mask_cmpeq_epi32_mask(k, a, Zero()); }
  static SM4_INLINE V MaskAdd1(V a, Mask k) { return _mm_mask_add_epi32(a, k, a, Set1(1)); }
  static SM4_INLINE V BlockIndex() { return _mm_setr_epi32(0, 1, 2, 3); }
  static SM4_INLINE V PrevBlocks(Mask, const uint8_t*, __m128i first) { return first; }
};

// --- The cipher on transposed registers ----------------------------------------------

// Transpose4 is the 4×4 dword transpose inside each 128-bit lane; it is its own inverse.
template <typename V>
SM4_INLINE void Transpose4(V& a, V& b, V& c, V& d) {
  using O = Ops<V>;
  const V t0 = O::UnpackLo32(a, b);
  const V t1 = O::UnpackHi32(a, b);
  const V t2 = O::UnpackLo32(c, d);
  const V t3 = O::UnpackHi32(c, d);
  a = O::UnpackLo64(t0, t2);
  b = O::UnpackHi64(t0, t2);
  c = O::UnpackLo64(t1, t3);
  d = O::UnpackHi64(t1, t3);
}

// Round sets X_a ← X_a ⊕ L(τ(X_b ⊕ X_c ⊕ X_d ⊕ rk)) in every group (§7.1).
template <typename V, int G, int A, int B, int C, int D>
SM4_INLINE void Round(V (&x)[G][4], V k) {
  using O = Ops<V>;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    // X_D is the word the previous round produced: XOR it in last, so X_B ⊕ X_C ⊕ rk
    // is off the dependency chain that bounds serial CBC encryption.
    const V t = O::Sbox(O::Xor(O::Xor3(x[g][B], x[g][C], k), x[g][D]));
    const V y = O::Xor3(t, O::template Rol<2>(t), O::template Rol<10>(t));
    const V z = O::Xor3(O::template Rol<18>(t), O::template Rol<24>(t), x[g][A]);
    x[g][A] = O::Xor(y, z);
  }
}

// Rounds runs the 32 rounds on G groups of transposed state and leaves the output words
// (X35, X34, X33, X32) in x[g][0..3], still transposed.
template <typename V, int G>
SM4_INLINE void Rounds(V (&x)[G][4], const uint32_t rk[32]) {
  using O = Ops<V>;
#pragma GCC unroll 8
  for (int r = 0; r < 32; r += 4) {
    Round<V, G, 0, 1, 2, 3>(x, O::Set1(rk[r]));
    Round<V, G, 1, 2, 3, 0>(x, O::Set1(rk[r + 1]));
    Round<V, G, 2, 3, 0, 1>(x, O::Set1(rk[r + 2]));
    Round<V, G, 3, 0, 1, 2>(x, O::Set1(rk[r + 3]));
  }
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    V t = x[g][0];
    x[g][0] = x[g][3];
    x[g][3] = t;
    t = x[g][1];
    x[g][1] = x[g][2];
    x[g][2] = t;
  }
}

// GroupMask returns the load/store mask of register m when only `nb` blocks of the
// group are present (nb is public).
template <typename V>
SM4_INLINE typename Ops<V>::Mask GroupMask(size_t nb, int m) {
  constexpr int L = Ops<V>::kLanes;
  const long have = static_cast<long>(nb) - static_cast<long>(L * m);
  const int blocks = have <= 0 ? 0 : (have >= L ? L : static_cast<int>(have));
  return Ops<V>::MakeMask(blocks);
}

// Loads G groups of blocks (full groups, or the first `nb` blocks of a single group when
// kPartial) and transposes them.
template <typename V, int G, bool kPartial>
SM4_INLINE void LoadGroups(V (&x)[G][4], const uint8_t* in, size_t nb) {
  using O = Ops<V>;
  constexpr size_t kRegBytes = 16 * O::kLanes;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const uint8_t* p = in + (4 * g + m) * kRegBytes;
      x[g][m] = O::Bswap32(kPartial ? O::MaskLoad(GroupMask<V>(nb, m), p) : O::Load(p));
    }
    Transpose4(x[g][0], x[g][1], x[g][2], x[g][3]);
  }
}

// Un-transposes the round output back into blocks (byte order restored).
template <typename V, int G>
SM4_INLINE void ToBlocks(V (&x)[G][4]) {
  using O = Ops<V>;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    Transpose4(x[g][0], x[g][1], x[g][2], x[g][3]);
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) x[g][m] = O::Bswap32(x[g][m]);
  }
}

template <typename V, int G, bool kPartial>
SM4_INLINE void StoreGroups(V (&x)[G][4], uint8_t* out, size_t nb) {
  using O = Ops<V>;
  constexpr size_t kRegBytes = 16 * O::kLanes;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      uint8_t* p = out + (4 * g + m) * kRegBytes;
      if (kPartial) {
        O::MaskStore(p, GroupMask<V>(nb, m), x[g][m]);
      } else {
        O::Store(p, x[g][m]);
      }
    }
  }
}

// XorInput XORs the input blocks into the (un-transposed) keystream.
template <typename V, int G, bool kPartial>
SM4_INLINE void XorInput(V (&x)[G][4], const uint8_t* in, size_t nb) {
  using O = Ops<V>;
  constexpr size_t kRegBytes = 16 * O::kLanes;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const uint8_t* p = in + (4 * g + m) * kRegBytes;
      x[g][m] = O::Xor(x[g][m], kPartial ? O::MaskLoad(GroupMask<V>(nb, m), p) : O::Load(p));
    }
  }
}

// --- ECB -----------------------------------------------------------------------------

template <typename V, int G, bool kPartial>
SM4_INLINE void EcbStep(const uint32_t rk[32], const uint8_t* in, uint8_t* out, size_t nb) {
  V x[G][4];
  LoadGroups<V, G, kPartial>(x, in, nb);
  Rounds<V, G>(x, rk);
  ToBlocks<V, G>(x);
  StoreGroups<V, G, kPartial>(x, out, nb);
}

SM4_TARGET void EncryptBlocks(const uint32_t rk[32], const uint8_t* in, uint8_t* out,
                              size_t num_blocks) {
  while (num_blocks >= 64) {
    EcbStep<__m512i, 4, false>(rk, in, out, 64);
    in += 1024;
    out += 1024;
    num_blocks -= 64;
  }
  if (num_blocks >= 32) {
    EcbStep<__m512i, 2, false>(rk, in, out, 32);
    in += 512;
    out += 512;
    num_blocks -= 32;
  }
  if (num_blocks >= 16) {
    EcbStep<__m512i, 1, false>(rk, in, out, 16);
    in += 256;
    out += 256;
    num_blocks -= 16;
  }
  if (num_blocks >= 4) {
    EcbStep<__m512i, 1, true>(rk, in, out, num_blocks);
  } else if (num_blocks > 0) {
    EcbStep<__m128i, 1, true>(rk, in, out, num_blocks);  // 1–3 blocks: xmm, 4 lanes
  }
}

// --- CTR -----------------------------------------------------------------------------

// CounterWords holds a counter block as four big-endian words.
struct CounterWords {
  uint32_t w[4];
};

// CtrStep encrypts G groups of counter blocks base + 16·g + lane (kWide: carries run
// through all 128 bits; otherwise only the last word counts, modulo 2^32) and XORs the
// keystream into `in`.
template <typename V, int G, bool kPartial, bool kWide>
SM4_INLINE void CtrStep(const uint32_t rk[32], const CounterWords& base, const uint8_t* in,
                        uint8_t* out, size_t nb) {
  using O = Ops<V>;
  constexpr uint32_t kGroupBlocks = 4 * O::kLanes;
  V x[G][4];
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    const V add = O::Add32(O::BlockIndex(), O::Set1(kGroupBlocks * g));
    const V w3 = O::Add32(O::Set1(base.w[3]), add);
    x[g][0] = O::Set1(base.w[0]);
    x[g][1] = O::Set1(base.w[1]);
    x[g][2] = O::Set1(base.w[2]);
    x[g][3] = w3;
    if (kWide) {
      // Carry out of word 3 iff the sum wrapped below the addend; then up the chain.
      auto c = O::LtU32(w3, add);
      x[g][2] = O::MaskAdd1(x[g][2], c);
      c = O::IsZeroAnd(c, x[g][2]);
      x[g][1] = O::MaskAdd1(x[g][1], c);
      c = O::IsZeroAnd(c, x[g][1]);
      x[g][0] = O::MaskAdd1(x[g][0], c);
    }
  }
  Rounds<V, G>(x, rk);
  ToBlocks<V, G>(x);
  XorInput<V, G, kPartial>(x, in, nb);
  StoreGroups<V, G, kPartial>(x, out, nb);
}

SM4_INLINE CounterWords LoadCounter(const uint8_t cb[16]) {
  CounterWords c;
  for (int i = 0; i < 4; ++i) {
    c.w[i] = (uint32_t{cb[4 * i]} << 24) | (uint32_t{cb[4 * i + 1]} << 16) |
             (uint32_t{cb[4 * i + 2]} << 8) | cb[4 * i + 3];
  }
  return c;
}

// Advance adds n to the counter (all 128 bits when kWide; the last word otherwise).
template <bool kWide>
SM4_INLINE void Advance(CounterWords& c, uint32_t n) {
  if (!kWide) {
    c.w[3] += n;
    return;
  }
  unsigned __int128 v = (static_cast<unsigned __int128>(c.w[0]) << 96) |
                        (static_cast<unsigned __int128>(c.w[1]) << 64) |
                        (static_cast<unsigned __int128>(c.w[2]) << 32) | c.w[3];
  v += n;  // ADD/ADC: no branch on the counter value
  c.w[0] = static_cast<uint32_t>(v >> 96);
  c.w[1] = static_cast<uint32_t>(v >> 64);
  c.w[2] = static_cast<uint32_t>(v >> 32);
  c.w[3] = static_cast<uint32_t>(v);
}

template <bool kWide>
SM4_INLINE void CtrBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                          const uint8_t* in, uint8_t* out, size_t num_blocks) {
  CounterWords c = LoadCounter(counter_block);
  while (num_blocks >= 64) {
    CtrStep<__m512i, 4, false, kWide>(rk, c, in, out, 64);
    Advance<kWide>(c, 64);
    in += 1024;
    out += 1024;
    num_blocks -= 64;
  }
  if (num_blocks >= 32) {
    CtrStep<__m512i, 2, false, kWide>(rk, c, in, out, 32);
    Advance<kWide>(c, 32);
    in += 512;
    out += 512;
    num_blocks -= 32;
  }
  if (num_blocks >= 16) {
    CtrStep<__m512i, 1, false, kWide>(rk, c, in, out, 16);
    Advance<kWide>(c, 16);
    in += 256;
    out += 256;
    num_blocks -= 16;
  }
  if (num_blocks >= 4) {
    CtrStep<__m512i, 1, true, kWide>(rk, c, in, out, num_blocks);
  } else if (num_blocks > 0) {
    CtrStep<__m128i, 1, true, kWide>(rk, c, in, out, num_blocks);
  }
  SecureZero(&c, sizeof(c));
}

SM4_TARGET void Ctr32EncryptBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                                   const uint8_t* in, uint8_t* out, size_t num_blocks) {
  CtrBlocks<false>(rk, counter_block, in, out, num_blocks);
}

SM4_TARGET void Ctr128EncryptBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                                    const uint8_t* in, uint8_t* out, size_t num_blocks) {
  CtrBlocks<true>(rk, counter_block, in, out, num_blocks);
}

// --- CBC decryption ------------------------------------------------------------------

// CbcDecStep decrypts G groups and XORs each block with the ciphertext block before it:
// read from `in` (not yet overwritten, even in place, because every store of this step
// comes after these loads) except for the first, which is `*prev`. Then *prev becomes
// the last ciphertext block of the step.
template <typename V, int G, bool kPartial>
SM4_INLINE void CbcDecStep(const uint32_t rk[32], __m128i* prev, const uint8_t* in,
                           uint8_t* out, size_t nb) {
  using O = Ops<V>;
  constexpr size_t kRegBytes = 16 * O::kLanes;
  V x[G][4];
  LoadGroups<V, G, kPartial>(x, in, nb);
  Rounds<V, G>(x, rk);
  ToBlocks<V, G>(x);
  const __m128i next = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * (nb - 1)));
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const uint8_t* p = in + (4 * g + m) * kRegBytes;
      const auto k = kPartial ? GroupMask<V>(nb, m) : O::MakeMask(O::kLanes);
      V c;
      if (g == 0 && m == 0) {
        c = O::PrevBlocks(k, p, *prev);
      } else {
        c = kPartial ? O::MaskLoad(k, p - 16) : O::Load(p - 16);
      }
      x[g][m] = O::Xor(x[g][m], c);
    }
  }
  StoreGroups<V, G, kPartial>(x, out, nb);
  *prev = next;
}

SM4_TARGET void CbcDecryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                                 uint8_t* out, size_t num_blocks) {
  __m128i prev = _mm_loadu_si128(reinterpret_cast<const __m128i*>(iv));
  while (num_blocks >= 64) {
    CbcDecStep<__m512i, 4, false>(rk, &prev, in, out, 64);
    in += 1024;
    out += 1024;
    num_blocks -= 64;
  }
  if (num_blocks >= 32) {
    CbcDecStep<__m512i, 2, false>(rk, &prev, in, out, 32);
    in += 512;
    out += 512;
    num_blocks -= 32;
  }
  if (num_blocks >= 16) {
    CbcDecStep<__m512i, 1, false>(rk, &prev, in, out, 16);
    in += 256;
    out += 256;
    num_blocks -= 16;
  }
  if (num_blocks >= 4) {
    CbcDecStep<__m512i, 1, true>(rk, &prev, in, out, num_blocks);
  } else if (num_blocks > 0) {
    CbcDecStep<__m128i, 1, true>(rk, &prev, in, out, num_blocks);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(iv), prev);
}

// --- Serial modes: one block at a time on xmm ----------------------------------------

// EncryptOne runs the 32 rounds on one block held in an xmm register (bytes in memory
// order). The round keys come broadcast from `rkb`, which the caller fills once.
SM4_INLINE __m128i EncryptOne(const __m128i rkb[32], __m128i block) {
  using O = Ops<__m128i>;
  block = O::Bswap32(block);
  __m128i x[1][4] = {{block, _mm_srli_si128(block, 4), _mm_srli_si128(block, 8),
                      _mm_srli_si128(block, 12)}};
#pragma GCC unroll 8
  for (int r = 0; r < 32; r += 4) {
    Round<__m128i, 1, 0, 1, 2, 3>(x, rkb[r]);
    Round<__m128i, 1, 1, 2, 3, 0>(x, rkb[r + 1]);
    Round<__m128i, 1, 2, 3, 0, 1>(x, rkb[r + 2]);
    Round<__m128i, 1, 3, 0, 1, 2>(x, rkb[r + 3]);
  }
  // (X35, X34, X33, X32) from lane 0 of each register.
  const __m128i hi = _mm_unpacklo_epi32(x[0][3], x[0][2]);
  const __m128i lo = _mm_unpacklo_epi32(x[0][1], x[0][0]);
  return O::Bswap32(_mm_unpacklo_epi64(hi, lo));
}

SM4_TARGET void CbcEncryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                                 uint8_t* out, size_t num_blocks) {
  __m128i rkb[32];
  for (int r = 0; r < 32; ++r) rkb[r] = _mm_set1_epi32(static_cast<int>(rk[r]));
  __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(iv));
  for (size_t i = 0; i < num_blocks; ++i) {
    const __m128i p = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * i));
    c = EncryptOne(rkb, _mm_xor_si128(p, c));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * i), c);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(iv), c);
  SecureZero(rkb, sizeof(rkb));
}

SM4_TARGET void CbcMacBlocks(const uint32_t rk[32], uint8_t y[16], const uint8_t* in,
                             size_t num_blocks) {
  __m128i rkb[32];
  for (int r = 0; r < 32; ++r) rkb[r] = _mm_set1_epi32(static_cast<int>(rk[r]));
  __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y));
  for (size_t i = 0; i < num_blocks; ++i) {
    const __m128i p = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * i));
    c = EncryptOne(rkb, _mm_xor_si128(p, c));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(y), c);
  SecureZero(rkb, sizeof(rkb));
}

// --- Multi-buffer CBC encryption and CBC-MAC: one message per lane -------------------

// Job j = 4m + k goes into 128-bit lane k of register m before the transpose, so after
// it into dword lane e = 4k + m of every word register.
constexpr int MultiLane(size_t job) { return static_cast<int>(4 * (job & 3) + (job >> 2)); }

alignas(16) constexpr uint8_t kZeroBlock[16] = {};

// LoadLanes loads block src[j] into lane MultiLane(j) of the word registers x[0..3].
SM4_INLINE void LoadLanes(__m512i (&x)[4], const uint8_t* const src[16]) {
  using O = Ops<__m512i>;
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[4 * m])));
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[4 * m + 1])), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[4 * m + 2])), 2);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[4 * m + 3])), 3);
    x[m] = O::Bswap32(v);
  }
  Transpose4(x[0], x[1], x[2], x[3]);
}

// StoreLanes is the inverse of LoadLanes (x is clobbered).
SM4_INLINE void StoreLanes(__m512i (&x)[4], uint8_t* const dst[16]) {
  using O = Ops<__m512i>;
  Transpose4(x[0], x[1], x[2], x[3]);
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    const __m512i v = O::Bswap32(x[m]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst[4 * m]), _mm512_castsi512_si128(v));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst[4 * m + 1]), _mm512_extracti32x4_epi32(v, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst[4 * m + 2]), _mm512_extracti32x4_epi32(v, 2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst[4 * m + 3]), _mm512_extracti32x4_epi32(v, 3));
  }
}

// RoundsPerLane runs the 32 rounds with round key rkt[r][e] in lane e and leaves
// (X35, X34, X33, X32) in x[0][0..3].
SM4_INLINE void RoundsPerLane(__m512i (&x)[1][4], const uint32_t (*rkt)[16]) {
#pragma GCC unroll 8
  for (int r = 0; r < 32; r += 4) {
    Round<__m512i, 1, 0, 1, 2, 3>(x, _mm512_load_si512(rkt[r]));
    Round<__m512i, 1, 1, 2, 3, 0>(x, _mm512_load_si512(rkt[r + 1]));
    Round<__m512i, 1, 2, 3, 0, 1>(x, _mm512_load_si512(rkt[r + 2]));
    Round<__m512i, 1, 3, 0, 1, 2>(x, _mm512_load_si512(rkt[r + 3]));
  }
  __m512i t = x[0][0];
  x[0][0] = x[0][3];
  x[0][3] = t;
  t = x[0][1];
  x[0][1] = x[0][2];
  x[0][2] = t;
}

// CbcMulti runs CBC encryption (or, when kMac, the CBC-MAC) of up to 16 jobs, one per
// lane of a zmm word register. The round keys are transposed once per call into
// rkt[r][lane]. Step i encrypts block i of every job that has one; the other lanes
// read a zero block, write to a scratch block and keep their chaining value (masked
// move), so every step costs the same and only public lengths choose addresses.
template <bool kMac>
SM4_INLINE void CbcMulti(const Sm4MultiJob* jobs, size_t num_jobs) {
  if (num_jobs == 0) return;
  if (num_jobs > kSm4MaxMultiJobs) num_jobs = kSm4MaxMultiJobs;
  alignas(64) uint32_t rkt[32][16] = {};
  alignas(16) uint8_t sink[16];
  size_t max_blocks = 0;
  const uint8_t* src[16];
  uint8_t* dst[16];
  for (size_t j = 0; j < 16; ++j) {
    src[j] = kZeroBlock;
    dst[j] = sink;
  }
  for (size_t j = 0; j < num_jobs; ++j) {
    const int e = MultiLane(j);
    for (int r = 0; r < 32; ++r) rkt[r][e] = jobs[j].rk[r];
    if (jobs[j].num_blocks > max_blocks) max_blocks = jobs[j].num_blocks;
    src[j] = jobs[j].iv;
  }
  __m512i c[4];
  LoadLanes(c, src);
  for (size_t i = 0; i < max_blocks; ++i) {
    __mmask16 active = 0;
    for (size_t j = 0; j < num_jobs; ++j) {
      const bool on = i < jobs[j].num_blocks;  // public
      src[j] = on ? jobs[j].in + 16 * i : kZeroBlock;
      if (!kMac) dst[j] = on ? jobs[j].out + 16 * i : sink;
      active |= static_cast<__mmask16>(on ? 1u << MultiLane(j) : 0u);
    }
    __m512i x[1][4];
    LoadLanes(x[0], src);
#pragma GCC unroll 4
    for (int w = 0; w < 4; ++w) x[0][w] = _mm512_xor_si512(x[0][w], c[w]);
    RoundsPerLane(x, rkt);
#pragma GCC unroll 4
    for (int w = 0; w < 4; ++w) c[w] = _mm512_mask_mov_epi32(c[w], active, x[0][w]);
    if (!kMac) StoreLanes(x[0], dst);
  }
  for (size_t j = 0; j < 16; ++j) dst[j] = j < num_jobs ? jobs[j].iv : sink;
  StoreLanes(c, dst);
  SecureZero(rkt, sizeof(rkt));
  SecureZero(sink, sizeof(sink));
}

SM4_TARGET void CbcEncryptMulti(const Sm4MultiJob* jobs, size_t num_jobs) {
  CbcMulti<false>(jobs, num_jobs);
}

SM4_TARGET void CbcMacMulti(const Sm4MultiJob* jobs, size_t num_jobs) {
  CbcMulti<true>(jobs, num_jobs);
}

}  // namespace

extern const Sm4Kernels kSm4VaesAvx512 = {
    /*name=*/"vaes_avx512",
    /*required_features=*/kCpuAvx512 | kCpuVaes | kCpuAesni,
    /*parallel_blocks=*/64,
    /*encrypt_blocks=*/EncryptBlocks,
    /*ctr32_encrypt_blocks=*/Ctr32EncryptBlocks,
    /*ctr128_encrypt_blocks=*/Ctr128EncryptBlocks,
    /*cbc_decrypt_blocks=*/CbcDecryptBlocks,
    /*cbc_encrypt_blocks=*/CbcEncryptBlocks,
    /*cbc_mac_blocks=*/CbcMacBlocks,
    /*cbc_encrypt_multi=*/CbcEncryptMulti,
    /*cbc_mac_multi=*/CbcMacMulti,
    /*gcm_crypt_fused=*/nullptr,
    /*gcm_fused_ghash=*/nullptr,
};

}  // namespace smcrypt

#endif  // defined(__x86_64__)
