// sm2_modinv.cc — constant-time inversion modulo p (sm2p256v1) by Bernstein–Yang
// "safegcd" divsteps (D. J. Bernstein, B.-Y. Yang, "Fast constant-time gcd computation
// and modular inversion", TCHES 2019), in the form of libsecp256k1's modinv64: signed
// 62-bit limbs, batches of 59 divsteps on the low 64 bits with the "zeta" variant of
// delta, and 10 batches (590 divsteps ≥ the bound for 256-bit inputs, §11 of the paper).
//
// Portable C++ (signed __int128 products); no target attribute, so every SM2 back end
// may call it.
//
// Constant-time review: the number of divsteps and batches is fixed; each divstep's
// choices are masks (ValueBarrier keeps the compiler from turning them back into
// branches); the matrix updates, the correction multiples md/me and the final
// normalization use masks only. No branch or memory index depends on the input.
#include "crypto/sm2/sm2_modinv.h"

#include "crypto/common/constant_time.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::internal {
namespace {

using i128 = __int128;
constexpr uint64_t kM62 = UINT64_MAX >> 2;

struct Signed62 {
  int64_t v[5];
};

struct Trans {
  int64_t u, v, q, r;
};

// p in signed-62 form, and p⁻¹ mod 2^62 (p ≡ −1 mod 2^64, so it is 2^62 − 1).
constexpr Signed62 kP62 = {{static_cast<int64_t>(0xFFFFFFFFFFFFFFFFull & kM62),
                            static_cast<int64_t>(((0xFFFFFFFFFFFFFFFFull >> 62) |
                                                  (0xFFFFFFFF00000000ull << 2)) & kM62),
                            static_cast<int64_t>(((0xFFFFFFFF00000000ull >> 60) |
                                                  (0xFFFFFFFFFFFFFFFFull << 4)) & kM62),
                            static_cast<int64_t>(((0xFFFFFFFFFFFFFFFFull >> 58) |
                                                  (0xFFFFFFFEFFFFFFFFull << 6)) & kM62),
                            static_cast<int64_t>(0xFFFFFFFEFFFFFFFFull >> 56)}};
constexpr uint64_t kPInv62 = kM62;

void ToSigned62(Signed62* r, const uint64_t a[4]) {
  r->v[0] = static_cast<int64_t>(a[0] & kM62);
  r->v[1] = static_cast<int64_t>(((a[0] >> 62) | (a[1] << 2)) & kM62);
  r->v[2] = static_cast<int64_t>(((a[1] >> 60) | (a[2] << 4)) & kM62);
  r->v[3] = static_cast<int64_t>(((a[2] >> 58) | (a[3] << 6)) & kM62);
  r->v[4] = static_cast<int64_t>(a[3] >> 56);
}

// FromSigned62 for limbs in [0, 2^62) (v[4] < 2^8): the value < 2^256.
void FromSigned62(uint64_t r[4], const Signed62& a) {
  const uint64_t v0 = static_cast<uint64_t>(a.v[0]), v1 = static_cast<uint64_t>(a.v[1]),
                 v2 = static_cast<uint64_t>(a.v[2]), v3 = static_cast<uint64_t>(a.v[3]),
                 v4 = static_cast<uint64_t>(a.v[4]);
  r[0] = v0 | (v1 << 62);
  r[1] = (v1 >> 2) | (v2 << 60);
  r[2] = (v2 >> 4) | (v3 << 58);
  r[3] = (v3 >> 6) | (v4 << 56);
}

// Divsteps59 runs 59 divsteps on the low 64 bits of f and g and returns the new zeta
// (zeta = −(delta + 1/2)); t receives the transition matrix scaled by 2^62.
int64_t Divsteps59(int64_t zeta, uint64_t f0, uint64_t g0, Trans* t) {
  // u, v, q, r start as 8·identity (the 3 missing divsteps of 62 give the 2^62 scale);
  // signed values in [−2^62, 2^62], kept as unsigned so that left shifts are defined.
  uint64_t u = 8, v = 0, q = 0, r = 8;
  uint64_t f = f0, g = g0;
  for (int i = 3; i < 62; ++i) {
    uint64_t mask1 = ValueBarrier(static_cast<uint64_t>(zeta >> 63));  // zeta < 0
    const uint64_t mask2 = ValueBarrier(0 - (g & 1));                  // g odd
    const uint64_t x = (f ^ mask1) - mask1;
    const uint64_t y = (u ^ mask1) - mask1;
    const uint64_t z = (v ^ mask1) - mask1;
    g += x & mask2;
    q += y & mask2;
    r += z & mask2;
    mask1 &= mask2;
    zeta = (zeta ^ static_cast<int64_t>(mask1)) - 1;
    f += g & mask1;
    u += q & mask1;
    v += r & mask1;
    g >>= 1;
    u <<= 1;
    v <<= 1;
  }
  t->u = static_cast<int64_t>(u);
  t->v = static_cast<int64_t>(v);
  t->q = static_cast<int64_t>(q);
  t->r = static_cast<int64_t>(r);
  return zeta;
}

// UpdateDe sets [d, e] = t·[d, e] / 2^62 mod p, keeping both in (−2p, p).
void UpdateDe(Signed62* d, Signed62* e, const Trans& t) {
  const int64_t d0 = d->v[0], d1 = d->v[1], d2 = d->v[2], d3 = d->v[3], d4 = d->v[4];
  const int64_t e0 = e->v[0], e1 = e->v[1], e2 = e->v[2], e3 = e->v[3], e4 = e->v[4];
  const int64_t u = t.u, v = t.v, q = t.q, r = t.r;
  const int64_t sd = ValueBarrier(d4 >> 63), se = ValueBarrier(e4 >> 63);
  int64_t md = (u & sd) + (v & se);
  int64_t me = (q & sd) + (r & se);
  i128 cd = static_cast<i128>(u) * d0 + static_cast<i128>(v) * e0;
  i128 ce = static_cast<i128>(q) * d0 + static_cast<i128>(r) * e0;
  // Choose md, me so that t·[d, e] + p·[md, me] has 62 zero low bits.
  md -= static_cast<int64_t>((kPInv62 * static_cast<uint64_t>(cd) + static_cast<uint64_t>(md)) &
                             kM62);
  me -= static_cast<int64_t>((kPInv62 * static_cast<uint64_t>(ce) + static_cast<uint64_t>(me)) &
                             kM62);
  cd += static_cast<i128>(kP62.v[0]) * md;
  ce += static_cast<i128>(kP62.v[0]) * me;
  cd >>= 62;
  ce >>= 62;
  cd += static_cast<i128>(u) * d1 + static_cast<i128>(v) * e1 + static_cast<i128>(kP62.v[1]) * md;
  ce += static_cast<i128>(q) * d1 + static_cast<i128>(r) * e1 + static_cast<i128>(kP62.v[1]) * me;
  d->v[0] = static_cast<int64_t>(static_cast<uint64_t>(cd) & kM62);
  e->v[0] = static_cast<int64_t>(static_cast<uint64_t>(ce) & kM62);
  cd >>= 62;
  ce >>= 62;
  cd += static_cast<i128>(u) * d2 + static_cast<i128>(v) * e2 + static_cast<i128>(kP62.v[2]) * md;
  ce += static_cast<i128>(q) * d2 + static_cast<i128>(r) * e2 + static_cast<i128>(kP62.v[2]) * me;
  d->v[1] = static_cast<int64_t>(static_cast<uint64_t>(cd) & kM62);
  e->v[1] = static_cast<int64_t>(static_cast<uint64_t>(ce) & kM62);
  cd >>= 62;
  ce >>= 62;
  cd += static_cast<i128>(u) * d3 + static_cast<i128>(v) * e3 + static_cast<i128>(kP62.v[3]) * md;
  ce += static_cast<i128>(q) * d3 + static_cast<i128>(r) * e3 + static_cast<i128>(kP62.v[3]) * me;
  d->v[2] = static_cast<int64_t>(static_cast<uint64_t>(cd) & kM62);
  e->v[2] = static_cast<int64_t>(static_cast<uint64_t>(ce) & kM62);
  cd >>= 62;
  ce >>= 62;
  cd += static_cast<i128>(u) * d4 + static_cast<i128>(v) * e4 + static_cast<i128>(kP62.v[4]) * md;
  ce += static_cast<i128>(q) * d4 + static_cast<i128>(r) * e4 + static_cast<i128>(kP62.v[4]) * me;
  d->v[3] = static_cast<int64_t>(static_cast<uint64_t>(cd) & kM62);
  e->v[3] = static_cast<int64_t>(static_cast<uint64_t>(ce) & kM62);
  cd >>= 62;
  ce >>= 62;
  d->v[4] = static_cast<int64_t>(cd);
  e->v[4] = static_cast<int64_t>(ce);
}

// UpdateFg sets [f, g] = t·[f, g] / 2^62 (exact).
void UpdateFg(Signed62* f, Signed62* g, const Trans& t) {
  const int64_t u = t.u, v = t.v, q = t.q, r = t.r;
  i128 cf = static_cast<i128>(u) * f->v[0] + static_cast<i128>(v) * g->v[0];
  i128 cg = static_cast<i128>(q) * f->v[0] + static_cast<i128>(r) * g->v[0];
  cf >>= 62;
  cg >>= 62;
  for (int i = 1; i < 5; ++i) {
    cf += static_cast<i128>(u) * f->v[i] + static_cast<i128>(v) * g->v[i];
    cg += static_cast<i128>(q) * f->v[i] + static_cast<i128>(r) * g->v[i];
    f->v[i - 1] = static_cast<int64_t>(static_cast<uint64_t>(cf) & kM62);
    g->v[i - 1] = static_cast<int64_t>(static_cast<uint64_t>(cg) & kM62);
    cf >>= 62;
    cg >>= 62;
  }
  f->v[4] = static_cast<int64_t>(cf);
  g->v[4] = static_cast<int64_t>(cg);
}

// Normalize maps d ∈ (−2p, p), multiplied by the sign of `sign`, to [0, p) with limbs in
// [0, 2^62).
void Normalize(Signed62* d, int64_t sign) {
  const int64_t m62 = static_cast<int64_t>(kM62);
  int64_t r[5] = {d->v[0], d->v[1], d->v[2], d->v[3], d->v[4]};
  int64_t cond_add = ValueBarrier(r[4] >> 63);
  for (int i = 0; i < 5; ++i) r[i] += kP62.v[i] & cond_add;
  const int64_t cond_negate = ValueBarrier(sign >> 63);
  for (int i = 0; i < 5; ++i) r[i] = (r[i] ^ cond_negate) - cond_negate;
  for (int i = 0; i < 4; ++i) {
    r[i + 1] += r[i] >> 62;
    r[i] &= m62;
  }
  cond_add = ValueBarrier(r[4] >> 63);
  for (int i = 0; i < 5; ++i) r[i] += kP62.v[i] & cond_add;
  for (int i = 0; i < 4; ++i) {
    r[i + 1] += r[i] >> 62;
    r[i] &= m62;
  }
  for (int i = 0; i < 5; ++i) d->v[i] = r[i];
}

}  // namespace

void Sm2ModInvP(uint64_t r[4], const uint64_t a[4]) {
  Signed62 d = {{0, 0, 0, 0, 0}}, e = {{1, 0, 0, 0, 0}}, f = kP62, g;
  ToSigned62(&g, a);
  Trans t;
  int64_t zeta = -1;
  for (int i = 0; i < 10; ++i) {
    zeta = Divsteps59(zeta, static_cast<uint64_t>(f.v[0]), static_cast<uint64_t>(g.v[0]), &t);
    UpdateDe(&d, &e, t);
    UpdateFg(&f, &g, t);
  }
  // g = 0 now and f = ±gcd = ±1 (or ±p for a = 0, where d = 0 gives 0).
  Normalize(&d, f.v[4]);
  FromSigned62(r, d);
  SecureZero(&d, sizeof(d));
  SecureZero(&e, sizeof(e));
  SecureZero(&f, sizeof(f));
  SecureZero(&g, sizeof(g));
  SecureZero(&t, sizeof(t));
}

}  // namespace smcrypt::internal
