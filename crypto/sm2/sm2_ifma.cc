// sm2_ifma.cc — the `ifma_avx512` SM2 kernels: 8 lanes × 5 limbs of 52 bits in zmm
// registers, VPMADD52LUQ/VPMADD52HUQ products (the layout of Intel's crypto_mb
// mbx_sm2_ecdsa_sign_mb8), for the batch paths of sm2_batch.cc. Whether they run is
// decided in sm2_dispatch.cc (Sm2IfmaSupported, Sm2BatchUsesIfma).
//
// CPU features: avx512 (F, BW, VL, DQ), ifma; every kernel function carries IFMA_ATTR.
// Files: sm2_ifma_field.inc, included here, is the lane field arithmetic (F8: 8 field
// elements in radix 2^52, Montgomery form with R' = 2^260, the representation and its
// bounds stated there); this file holds the radix conversions, the lane point
// arithmetic (mixed and Jacobian additions, doubling), the combs and the entry points.
//
// Constant time (signing, ephemeral Diffie–Hellman): Sm2IfmaMulBase8 and
// Sm2IfmaMulPointTable8 (the same comb, MulComb8, over G's table or a public key's)
// compute Booth digits with masks, read all 64 entries of every comb window for every
// lane (masked broadcasts selected by comparisons of the digit vector, never an address
// from a digit), and resolve the infinity cases (digit 0, accumulator still at infinity)
// with lane masks in blends. The doubling case of the mixed addition cannot occur in a
// comb for k ∈ [1, n − 1] (sm2_point_impl.inc, JAddMixedNoDbl), so the lanes need no
// doubling. No branch depends on a lane's data. Sm2IfmaMulTwo8Vt (verification) is
// variable time: it skips windows whose digits are all 0 and gathers table entries by
// digit; its inputs are public.
// Checked by tests/ct/ct_dudect_test.cc (fixed-vs-random timing, label slow):
// valgrind 3.19 cannot decode AVX-512 IFMA, so tests/ct/ct_valgrind_test.cc covers only
// the batch code's single-operation path.
#include <cstring>

#include "crypto/common/constant_time.h"
#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_point.h"
#include "smcrypt/secure_zero.h"

#if defined(SMCRYPT_SM2_HAVE_IFMA)
#include <immintrin.h>
// GCC 12 reports the unmasked AVX-512 shifts' internal "undefined" source operand as
// (maybe-)uninitialized; the instructions never read it.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#endif

namespace smcrypt::internal {

using u128 = unsigned __int128;

namespace {

constexpr uint64_t kM52 = (uint64_t{1} << 52) - 1;

// Plain 4×64 limbs → five 52-bit limbs (any value < 2^256).
void To52(const uint64_t a[4], uint64_t o[5]) {
  o[0] = a[0] & kM52;
  o[1] = ((a[0] >> 52) | (a[1] << 12)) & kM52;
  o[2] = ((a[1] >> 40) | (a[2] << 24)) & kM52;
  o[3] = ((a[2] >> 28) | (a[3] << 36)) & kM52;
  o[4] = a[3] >> 16;
}

// Five normalized 52-bit limbs of a value < 2p → fully reduced 4×64 limbs.
[[maybe_unused]] void From52Reduce(const uint64_t in[5], uint64_t r[4]) {  // IFMA kernels only
  uint64_t a[5];
  a[0] = in[0] | (in[1] << 52);
  a[1] = (in[1] >> 12) | (in[2] << 40);
  a[2] = (in[2] >> 24) | (in[3] << 28);
  a[3] = (in[3] >> 36) | (in[4] << 16);
  a[4] = in[4] >> 48;
  uint64_t d[4];
  u128 borrow = 0;
  for (int j = 0; j < 4; ++j) {
    const u128 t = static_cast<u128>(a[j]) - kSm2P[j] - borrow;
    d[j] = static_cast<uint64_t>(t);
    borrow = (t >> 64) & 1;
  }
  // a − p ≥ 0 iff a[4] ≥ borrow; keep a where it went negative.
  const uint64_t keep = CtIsZero64(a[4]) & (0 - static_cast<uint64_t>(borrow));
  for (int j = 0; j < 4; ++j) r[j] = (a[j] & keep) | (d[j] & ~keep);
}

}  // namespace

void Sm2AffineToIfma(const Sm2Affine& p, uint64_t out[kSm2IfmaPointWords]) {
  // x·2^256 → x·2^260: four doublings mod p.
  uint64_t x[4], y[4];
  FeCopy(x, p.x);
  FeCopy(y, p.y);
  for (int i = 0; i < 4; ++i) {
    FeAdd(x, x, x);
    FeAdd(y, y, y);
  }
  To52(x, out);
  To52(y, out + 5);
}

#if defined(SMCRYPT_SM2_HAVE_IFMA)

#define IFMA_ATTR __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx512ifma")))

namespace {

// The lane field arithmetic (F8, FAdd, FSub, FNeg, FMul, FSqr, FBlend, FIsZero, Load4x64,
// Store4x64): sm2_ifma_field.inc.
#include "crypto/sm2/sm2_ifma_field.inc"

struct J8 {
  F8 X, Y, Z;
};

// Mixed addition madd-2007-bl (7M + 4S) of lane points a (Jacobian) and b (affine);
// h is the x difference (0 mod p when a = ±b, which callers exclude or detect).
IFMA_ATTR inline void Madd(J8& out, const J8& a, const F8& bx, const F8& by, F8& h) {
  F8 z1z1, u2, s2, hh, i, j, rr, v, t;
  FSqr(z1z1, a.Z);
  FMul(u2, bx, z1z1);
  FMul(s2, by, a.Z);
  FMul(s2, s2, z1z1);
  FSub(h, u2, a.X);
  FSqr(hh, h);
  FAdd(i, hh, hh);
  FAdd(i, i, i);
  FMul(j, h, i);
  FSub(rr, s2, a.Y);
  FAdd(rr, rr, rr);
  FMul(v, a.X, i);
  FSqr(out.X, rr);
  FSub(out.X, out.X, j);
  FSub(out.X, out.X, v);
  FSub(out.X, out.X, v);
  FSub(t, v, out.X);
  FMul(out.Y, t, rr);
  FMul(t, a.Y, j);
  FAdd(t, t, t);
  FSub(out.Y, out.Y, t);
  FAdd(t, a.Z, h);
  FSqr(t, t);
  FSub(t, t, z1z1);
  FSub(out.Z, t, hh);
}

// acc += (bx, by) in the lanes of `active`; lanes with acc_inf take b itself. Returns the
// lanes whose addition was exceptional (active, accumulator finite, h ≡ 0).
IFMA_ATTR inline __mmask8 AddLanes(J8& acc, __mmask8& acc_inf, __mmask8 active, const F8& bx,
                                   const F8& by, bool detect) {
  J8 out;
  F8 h;
  Madd(out, acc, bx, by, h);
  __mmask8 exc = 0;
  if (detect) exc = FIsZero(h) & active & static_cast<__mmask8>(~acc_inf);
  const __mmask8 take_b = active & acc_inf;
  FBlend(out.X, take_b, bx);
  FBlend(out.Y, take_b, by);
  FBlend(out.Z, take_b, FConst(C52().one));
  const __mmask8 keep = static_cast<__mmask8>(~active);
  FBlend(out.X, keep, acc.X);
  FBlend(out.Y, keep, acc.Y);
  FBlend(out.Z, keep, acc.Z);
  acc = out;
  acc_inf = acc_inf & static_cast<__mmask8>(~active);
  return exc;
}

IFMA_ATTR void StoreJ8(Sm2Jacobian r[kSm2IfmaLanes], const J8& a, __mmask8 inf) {
  uint64_t* xs[kSm2IfmaLanes];
  uint64_t* ys[kSm2IfmaLanes];
  uint64_t* zs[kSm2IfmaLanes];
  for (int l = 0; l < kSm2IfmaLanes; ++l) {
    xs[l] = r[l].X;
    ys[l] = r[l].Y;
    zs[l] = r[l].Z;
  }
  F8 z = a.Z;
  F8 zero;
  for (int j = 0; j < 5; ++j) zero.v[j] = _mm512_setzero_si512();
  FBlend(z, inf, zero);
  Store4x64(xs, a.X);
  Store4x64(ys, a.Y);
  Store4x64(zs, z);
}

inline uint64_t WindowBits(const uint64_t s[4], int start, int count) {
  const uint64_t mask = (uint64_t{1} << count) - 1;
  if (start < 0) return (s[0] << 1) & mask;
  const int q = start >> 6, b = start & 63;
  if (q >= 4) return 0;
  uint64_t v = s[q] >> b;
  if (b != 0 && q + 1 < 4) v |= s[q + 1] << (64 - b);
  return v & mask;
}

// G's comb table (Sm2BaseCombTable) in IFMA words, 64-byte aligned rows; built once.
const uint64_t* BaseTable52() {
  static const uint64_t* const table = [] {
    const Sm2CombTable& g = Sm2BaseCombTable();
    const size_t total = static_cast<size_t>(g.windows) << (g.w - 1);
    auto* out = static_cast<uint64_t*>(::operator new(
        total * kSm2IfmaPointWords * sizeof(uint64_t), std::align_val_t{64}));
    for (size_t i = 0; i < total; ++i) Sm2AffineToIfma(g.points[i], out + i * kSm2IfmaPointWords);
    return out;
  }();
  return table;
}

// r[l] = k[l]·Q for the point Q whose comb table (IFMA words, `windows` signed w-bit
// windows of 2^(w−1) points) is `table`. Constant time in k (see Sm2IfmaMulBase8).
IFMA_ATTR void MulComb8(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t k[kSm2IfmaLanes][4],
                        const uint64_t* table, int w, int windows) {
  const int n = 1 << (w - 1);
  J8 acc;
  for (int j = 0; j < 5; ++j) {
    acc.X.v[j] = acc.Y.v[j] = acc.Z.v[j] = _mm512_setzero_si512();
  }
  __mmask8 acc_inf = 0xff;
  F8 x, y, ny;
  for (int i = 0; i < windows; ++i) {
    alignas(64) uint64_t dig[kSm2IfmaLanes], negs[kSm2IfmaLanes];
    for (int l = 0; l < kSm2IfmaLanes; ++l) {
      uint64_t neg;
      dig[l] = BoothRecode(WindowBits(k[l], w * i - 1, w + 1), w, &neg);
      negs[l] = neg;
    }
    const __m512i d = _mm512_load_si512(dig);
    const __mmask8 neg = _mm512_cmpneq_epi64_mask(_mm512_load_si512(negs), _mm512_setzero_si512());
    const __mmask8 nonzero = _mm512_cmpneq_epi64_mask(d, _mm512_setzero_si512());
    for (int j = 0; j < 5; ++j) x.v[j] = y.v[j] = _mm512_setzero_si512();
    const uint64_t* row = table + static_cast<size_t>(i) * n * kSm2IfmaPointWords;
    __m512i ctr = Bc(1);
    const __m512i one = Bc(1);
    for (int e = 0; e < n; ++e) {
      const __mmask8 m = _mm512_cmpeq_epi64_mask(d, ctr);
      ctr = _mm512_add_epi64(ctr, one);
      const uint64_t* pt = row + static_cast<size_t>(e) * kSm2IfmaPointWords;
      for (int j = 0; j < 5; ++j) {
        x.v[j] = _mm512_mask_mov_epi64(x.v[j], m, Bc(pt[j]));
        y.v[j] = _mm512_mask_mov_epi64(y.v[j], m, Bc(pt[5 + j]));
      }
    }
    FNeg(ny, y);
    FBlend(y, neg, ny);
    AddLanes(acc, acc_inf, nonzero, x, y, false);
    SecureZero(dig, sizeof(dig));
    SecureZero(negs, sizeof(negs));
  }
  StoreJ8(r, acc, acc_inf);
  SecureZero(&acc, sizeof(acc));
  SecureZero(&x, sizeof(x));
  SecureZero(&y, sizeof(y));
  SecureZero(&ny, sizeof(ny));
}

IFMA_ATTR void MulBase8(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t k[kSm2IfmaLanes][4]) {
  const Sm2CombTable& g = Sm2BaseCombTable();
  MulComb8(r, k, BaseTable52(), g.w, g.windows);
}

// Adds Σ comb digits of s over `tables` (per lane; nullptr = no contribution) to acc.
// w-bit Booth windows, `windows` of them, 2^(w−1) points per window. Variable time.
IFMA_ATTR __mmask8 CombAddVt8(J8& acc, __mmask8& acc_inf, const uint64_t* const tables[8],
                              int w, int windows, const uint64_t s[kSm2IfmaLanes][4]) {
  const int n = 1 << (w - 1);
  __mmask8 exc = 0;
  F8 x, y, ny;
  for (int i = 0; i < windows; ++i) {
    alignas(64) uint64_t addr[kSm2IfmaLanes];
    __mmask8 active = 0, neg = 0;
    for (int l = 0; l < kSm2IfmaLanes; ++l) {
      uint64_t ng;
      const uint64_t d = BoothRecode(WindowBits(s[l], w * i - 1, w + 1), w, &ng);
      if (d == 0 || tables[l] == nullptr) {
        addr[l] = reinterpret_cast<uint64_t>(BaseTable52());
        continue;
      }
      active |= static_cast<__mmask8>(1u << l);
      if (ng) neg |= static_cast<__mmask8>(1u << l);
      addr[l] = reinterpret_cast<uint64_t>(tables[l] + (static_cast<size_t>(i) * n + (d - 1)) *
                                                           kSm2IfmaPointWords);
    }
    if (active == 0) continue;
    const __m512i a = _mm512_load_si512(addr);
    for (int j = 0; j < 5; ++j) {
      x.v[j] = _mm512_i64gather_epi64(_mm512_add_epi64(a, Bc(8 * j)), nullptr, 1);
      y.v[j] = _mm512_i64gather_epi64(_mm512_add_epi64(a, Bc(8 * (5 + j))), nullptr, 1);
    }
    FNeg(ny, y);
    FBlend(y, neg, ny);
    exc |= AddLanes(acc, acc_inf, active, x, y, true);
  }
  return exc;
}

IFMA_ATTR void MulTwo8Vt(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t s[kSm2IfmaLanes][4],
                         const uint64_t* const p_tables[kSm2IfmaLanes],
                         const uint64_t t[kSm2IfmaLanes][4], uint8_t exceptional[kSm2IfmaLanes]) {
  J8 acc;
  for (int j = 0; j < 5; ++j) {
    acc.X.v[j] = acc.Y.v[j] = acc.Z.v[j] = _mm512_setzero_si512();
  }
  __mmask8 acc_inf = 0xff;
  // The per-key tables: 5-bit windows, 52 of them (Sm2PointTable).
  __mmask8 exc = CombAddVt8(acc, acc_inf, p_tables, kSm2PointTableW, kSm2PointTableWindows, t);
  const Sm2CombTable& g = Sm2BaseCombTable();
  const uint64_t* gt[kSm2IfmaLanes];
  for (int l = 0; l < kSm2IfmaLanes; ++l) gt[l] = BaseTable52();
  exc |= CombAddVt8(acc, acc_inf, gt, g.w, g.windows, s);
  StoreJ8(r, acc, acc_inf);
  for (int l = 0; l < kSm2IfmaLanes; ++l) exceptional[l] = (exc >> l) & 1;
}

// Jacobian doubling dbl-2001-b (a = −3), 3M + 5S, in lanes.
IFMA_ATTR inline void JDbl8(J8& r, const J8& a) {
  F8 delta, gamma, beta, alpha, t1, t2, x3, z3;
  FSqr(delta, a.Z);
  FSqr(gamma, a.Y);
  FMul(beta, a.X, gamma);
  FSub(t1, a.X, delta);
  FAdd(t2, a.X, delta);
  FMul(alpha, t1, t2);
  FAdd(t1, alpha, alpha);
  FAdd(alpha, t1, alpha);  // 3(X − δ)(X + δ)
  FAdd(z3, a.Y, a.Z);
  FSqr(z3, z3);
  FSub(z3, z3, gamma);
  FSub(z3, z3, delta);
  FAdd(beta, beta, beta);
  FAdd(beta, beta, beta);  // 4β
  FSqr(x3, alpha);
  FAdd(t1, beta, beta);
  FSub(x3, x3, t1);
  FSub(t1, beta, x3);
  FMul(t1, t1, alpha);
  FSqr(t2, gamma);
  FAdd(t2, t2, t2);
  FAdd(t2, t2, t2);
  FAdd(t2, t2, t2);  // 8γ²
  FSub(r.Y, t1, t2);
  r.X = x3;
  r.Z = z3;
}

// Jacobian addition add-2007-bl (11M + 5S) in lanes; h ≡ 0 when a = ±b.
IFMA_ATTR inline void JAdd8(J8& out, const J8& a, const J8& b, F8& h) {
  F8 z1z1, z2z2, u1, u2, s1, s2, i, j, rr, v, t;
  FSqr(z1z1, a.Z);
  FSqr(z2z2, b.Z);
  FMul(u1, a.X, z2z2);
  FMul(u2, b.X, z1z1);
  FMul(s1, a.Y, b.Z);
  FMul(s1, s1, z2z2);
  FMul(s2, b.Y, a.Z);
  FMul(s2, s2, z1z1);
  FSub(h, u2, u1);
  FAdd(i, h, h);
  FSqr(i, i);
  FMul(j, h, i);
  FSub(rr, s2, s1);
  FAdd(rr, rr, rr);
  FMul(v, u1, i);
  FSqr(out.X, rr);
  FSub(out.X, out.X, j);
  FSub(out.X, out.X, v);
  FSub(out.X, out.X, v);
  FSub(t, v, out.X);
  FMul(out.Y, t, rr);
  FMul(t, s1, j);
  FAdd(t, t, t);
  FSub(out.Y, out.Y, t);
  FAdd(t, a.Z, b.Z);
  FSqr(t, t);
  FSub(t, t, z1z1);
  FSub(t, t, z2z2);
  FMul(out.Z, t, h);
}

// StoreEntry writes the lane point pt to entry[coordinate][limb][lane].
IFMA_ATTR inline void StoreEntry(uint64_t entry[3][5][kSm2IfmaLanes], const J8& pt) {
  for (int j = 0; j < 5; ++j) {
    _mm512_store_si512(entry[0][j], pt.X.v[j]);
    _mm512_store_si512(entry[1][j], pt.Y.v[j]);
    _mm512_store_si512(entry[2][j], pt.Z.v[j]);
  }
}

// s·G + t·P for 8 lanes of affine P without comb tables: t·P by signed 5-bit Booth
// windows over 1P … 16P (Jacobian, gathered per lane by digit), five doublings per
// window, then s·G over G's comb. Variable time (public inputs); lanes that meet ±the
// added point are flagged in the returned mask.
IFMA_ATTR __mmask8 MulTwo8VarVt(J8& acc, __mmask8& acc_inf, const Sm2Affine p[kSm2IfmaLanes],
                                const uint64_t s[kSm2IfmaLanes][4],
                                const uint64_t t[kSm2IfmaLanes][4]) {
  constexpr int kW = 5, kWindows = 52, kEntries = 16;
  uint64_t px[kSm2IfmaLanes][4], py[kSm2IfmaLanes][4];
  for (int l = 0; l < kSm2IfmaLanes; ++l) {
    std::memcpy(px[l], p[l].x, 32);
    std::memcpy(py[l], p[l].y, 32);
  }
  F8 x, y;
  Load4x64(x, px);
  Load4x64(y, py);
  // table[e] = (e + 1)·P; (e + 1)·P = e·P + P never doubles for e ≥ 2 (P has odd order n).
  alignas(64) uint64_t table[kEntries][3][5][kSm2IfmaLanes];
  J8 cur;
  cur.X = x;
  cur.Y = y;
  cur.Z = FConst(C52().one);
  StoreEntry(table[0], cur);
  JDbl8(cur, cur);
  StoreEntry(table[1], cur);
  for (int e = 2; e < kEntries; ++e) {
    J8 next;
    F8 h;
    Madd(next, cur, x, y, h);
    cur = next;
    StoreEntry(table[e], cur);
  }
  __mmask8 exc = 0;
  const __m512i lane_ids = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  for (int i = kWindows - 1; i >= 0; --i) {
    if (i != kWindows - 1) {
      for (int d = 0; d < kW; ++d) JDbl8(acc, acc);
    }
    alignas(64) uint64_t idx[kSm2IfmaLanes];
    __mmask8 active = 0, neg = 0;
    for (int l = 0; l < kSm2IfmaLanes; ++l) {
      uint64_t ng;
      const uint64_t d = BoothRecode(WindowBits(t[l], kW * i - 1, kW + 1), kW, &ng);
      idx[l] = d == 0 ? 0 : d - 1;
      if (d != 0) active |= static_cast<__mmask8>(1u << l);
      if (d != 0 && ng) neg |= static_cast<__mmask8>(1u << l);
    }
    if (active == 0) continue;
    // Word offset of table[idx][c][j][l] = ((idx·3 + c)·5 + j)·8 + l.
    const __m512i base = _mm512_add_epi64(
        _mm512_mullo_epi64(_mm512_load_si512(idx), Bc(3 * 5 * kSm2IfmaLanes)), lane_ids);
    J8 pt;
    const uint64_t* tb = &table[0][0][0][0];
    for (int j = 0; j < 5; ++j) {
      pt.X.v[j] = _mm512_i64gather_epi64(_mm512_add_epi64(base, Bc((0 * 5 + j) * 8)), tb, 8);
      pt.Y.v[j] = _mm512_i64gather_epi64(_mm512_add_epi64(base, Bc((1 * 5 + j) * 8)), tb, 8);
      pt.Z.v[j] = _mm512_i64gather_epi64(_mm512_add_epi64(base, Bc((2 * 5 + j) * 8)), tb, 8);
    }
    F8 ny;
    FNeg(ny, pt.Y);
    FBlend(pt.Y, neg, ny);
    J8 out;
    F8 h;
    JAdd8(out, acc, pt, h);
    exc |= FIsZero(h) & active & static_cast<__mmask8>(~acc_inf);
    const __mmask8 take_b = active & acc_inf;
    FBlend(out.X, take_b, pt.X);
    FBlend(out.Y, take_b, pt.Y);
    FBlend(out.Z, take_b, pt.Z);
    const __mmask8 keep = static_cast<__mmask8>(~active);
    FBlend(out.X, keep, acc.X);
    FBlend(out.Y, keep, acc.Y);
    FBlend(out.Z, keep, acc.Z);
    acc = out;
    acc_inf = acc_inf & static_cast<__mmask8>(~active);
  }
  const Sm2CombTable& g = Sm2BaseCombTable();
  const uint64_t* gt[kSm2IfmaLanes];
  for (int l = 0; l < kSm2IfmaLanes; ++l) gt[l] = BaseTable52();
  exc |= CombAddVt8(acc, acc_inf, gt, g.w, g.windows, s);
  return exc;
}

IFMA_ATTR void MulTwo8PointsVt(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t s[kSm2IfmaLanes][4],
                               const Sm2Affine p[kSm2IfmaLanes], const uint64_t t[kSm2IfmaLanes][4],
                               uint8_t exceptional[kSm2IfmaLanes]) {
  J8 acc;
  for (int j = 0; j < 5; ++j) {
    acc.X.v[j] = acc.Y.v[j] = acc.Z.v[j] = _mm512_setzero_si512();
  }
  __mmask8 acc_inf = 0xff;
  const __mmask8 exc = MulTwo8VarVt(acc, acc_inf, p, s, t);
  StoreJ8(r, acc, acc_inf);
  for (int l = 0; l < kSm2IfmaLanes; ++l) exceptional[l] = (exc >> l) & 1;
}

IFMA_ATTR void FieldOp8(int op, uint64_t r[kSm2IfmaLanes][4], const uint64_t a[kSm2IfmaLanes][4],
                        const uint64_t b[kSm2IfmaLanes][4]) {
  F8 x, y, z;
  Load4x64(x, a);
  Load4x64(y, b);
  switch (op) {
    case 0:
      FMul(z, x, y);
      break;
    case 1:
      FSqr(z, x);
      break;
    case 2:
      FAdd(z, x, y);
      break;
    default:
      FSub(z, x, y);
      break;
  }
  uint64_t* outs[kSm2IfmaLanes];
  for (int l = 0; l < kSm2IfmaLanes; ++l) outs[l] = r[l];
  Store4x64(outs, z);
}

}  // namespace

void Sm2IfmaMulBase8(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t k[kSm2IfmaLanes][4]) {
  MulBase8(r, k);
}

void Sm2IfmaMulPointTable8(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t k[kSm2IfmaLanes][4],
                           const uint64_t* p_table) {
  MulComb8(r, k, p_table, kSm2PointTableW, kSm2PointTableWindows);
}

void Sm2IfmaMulTwo8Vt(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t s[kSm2IfmaLanes][4],
                      const uint64_t* const p_tables[kSm2IfmaLanes],
                      const uint64_t t[kSm2IfmaLanes][4], uint8_t exceptional[kSm2IfmaLanes]) {
  MulTwo8Vt(r, s, p_tables, t, exceptional);
}

void Sm2IfmaFieldOpForTesting(int op, uint64_t r[kSm2IfmaLanes][4],
                              const uint64_t a[kSm2IfmaLanes][4],
                              const uint64_t b[kSm2IfmaLanes][4]) {
  FieldOp8(op, r, a, b);
}

void Sm2IfmaMulTwo8PointsVt(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t s[kSm2IfmaLanes][4],
                            const Sm2Affine p[kSm2IfmaLanes], const uint64_t t[kSm2IfmaLanes][4],
                            uint8_t exceptional[kSm2IfmaLanes]) {
  MulTwo8PointsVt(r, s, p, t, exceptional);
}

#else  // no IFMA kernels in this build: never called (Sm2IfmaSupported() is false)

void Sm2IfmaMulBase8(Sm2Jacobian*, const uint64_t (*)[4]) {}
void Sm2IfmaMulPointTable8(Sm2Jacobian*, const uint64_t (*)[4], const uint64_t*) {}
void Sm2IfmaMulTwo8Vt(Sm2Jacobian*, const uint64_t (*)[4], const uint64_t* const*,
                      const uint64_t (*)[4], uint8_t*) {}
void Sm2IfmaFieldOpForTesting(int, uint64_t (*)[4], const uint64_t (*)[4], const uint64_t (*)[4]) {}
void Sm2IfmaMulTwo8PointsVt(Sm2Jacobian*, const uint64_t (*)[4], const Sm2Affine*,
                            const uint64_t (*)[4], uint8_t*) {}

#endif

}  // namespace smcrypt::internal
