// sm2_point.cc — single point operations on sm2p256v1 through the back end's fe_mul /
// fe_sqr, and the scalar-multiplication entry points (which run inside the back end). See
// sm2_point.h for the formulas, the complete handling of special cases and the
// constant-time rules.
//
// Constant-time review: PointAdd / PointAddMixed compute every case and select with
// masks; PointToAffine uses the constant-time safegcd inversion; no branch or index depends on
// coordinates.
#include "crypto/sm2/sm2_point.h"

#include <cstring>

#include "crypto/common/constant_time.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::internal {
namespace {

struct CurveConsts {
  uint64_t b[4];
  Sm2Affine g;
};

const CurveConsts& Consts() {
  static const CurveConsts c = [] {
    const Sm2Kernels& k = Sm2ActiveKernels();
    CurveConsts r;
    FeFromPlain(k, r.b, kSm2B);
    FeFromPlain(k, r.g.x, kSm2Gx);
    FeFromPlain(k, r.g.y, kSm2Gy);
    return r;
  }();
  return c;
}

void JacCmov(Sm2Jacobian* r, const Sm2Jacobian& a, uint64_t mask) {
  FeCmov(r->X, a.X, mask);
  FeCmov(r->Y, a.Y, mask);
  FeCmov(r->Z, a.Z, mask);
}

}  // namespace

const uint64_t* Sm2CurveB() { return Consts().b; }
const Sm2Affine& Sm2Generator() { return Consts().g; }

void PointFromAffine(Sm2Jacobian* r, const Sm2Affine& a) {
  FeCopy(r->X, a.x);
  FeCopy(r->Y, a.y);
  FeSetOne(r->Z);
}

void PointDouble(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2Jacobian& a) {
  // dbl-2001-b (a = −3): 3M + 5S. Infinity (Z = 0) stays at infinity; there are no
  // points with Y = 0 (the group has odd prime order).
  uint64_t delta[4], gamma[4], beta[4], alpha[4], t1[4], t2[4];
  k.fe_sqr(delta, a.Z);
  k.fe_sqr(gamma, a.Y);
  k.fe_mul(beta, a.X, gamma);
  FeSub(t1, a.X, delta);
  FeAdd(t2, a.X, delta);
  k.fe_mul(alpha, t1, t2);
  FeAdd(t1, alpha, alpha);
  FeAdd(alpha, t1, alpha);  // alpha = 3(X − δ)(X + δ)
  uint64_t z3[4];
  FeAdd(z3, a.Y, a.Z);
  k.fe_sqr(z3, z3);
  FeSub(z3, z3, gamma);
  FeSub(z3, z3, delta);
  FeAdd(beta, beta, beta);
  FeAdd(beta, beta, beta);  // 4β
  uint64_t x3[4];
  k.fe_sqr(x3, alpha);
  FeAdd(t1, beta, beta);  // 8β
  FeSub(x3, x3, t1);
  FeSub(t1, beta, x3);
  k.fe_mul(t1, t1, alpha);
  k.fe_sqr(t2, gamma);
  FeAdd(t2, t2, t2);
  FeAdd(t2, t2, t2);
  FeAdd(t2, t2, t2);  // 8γ²
  FeSub(r->Y, t1, t2);
  FeCopy(r->X, x3);
  FeCopy(r->Z, z3);
}

void PointAdd(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2Jacobian& a, const Sm2Jacobian& b) {
  // add-2007-bl: 11M + 5S, plus a doubling for the P = Q case.
  uint64_t z1z1[4], z2z2[4], u1[4], u2[4], s1[4], s2[4], h[4], i[4], j[4], rr[4], v[4], t[4];
  Sm2Jacobian out;
  k.fe_sqr(z1z1, a.Z);
  k.fe_sqr(z2z2, b.Z);
  k.fe_mul(u1, a.X, z2z2);
  k.fe_mul(u2, b.X, z1z1);
  k.fe_mul(s1, a.Y, b.Z);
  k.fe_mul(s1, s1, z2z2);
  k.fe_mul(s2, b.Y, a.Z);
  k.fe_mul(s2, s2, z1z1);
  FeSub(h, u2, u1);
  FeAdd(i, h, h);
  k.fe_sqr(i, i);
  k.fe_mul(j, h, i);
  FeSub(rr, s2, s1);
  FeAdd(rr, rr, rr);
  k.fe_mul(v, u1, i);
  k.fe_sqr(out.X, rr);
  FeSub(out.X, out.X, j);
  FeSub(out.X, out.X, v);
  FeSub(out.X, out.X, v);
  FeSub(t, v, out.X);
  k.fe_mul(out.Y, t, rr);
  k.fe_mul(t, s1, j);
  FeAdd(t, t, t);
  FeSub(out.Y, out.Y, t);
  FeAdd(t, a.Z, b.Z);
  k.fe_sqr(t, t);
  FeSub(t, t, z1z1);
  FeSub(t, t, z2z2);
  k.fe_mul(out.Z, t, h);

  const uint64_t a_inf = FeIsZero(a.Z);
  const uint64_t b_inf = FeIsZero(b.Z);
  const uint64_t same = FeIsZero(h) & FeIsZero(rr) & ~a_inf & ~b_inf;
  Sm2Jacobian dbl;
  PointDouble(k, &dbl, a);
  JacCmov(&out, dbl, same);
  JacCmov(&out, b, a_inf);
  JacCmov(&out, a, b_inf);
  *r = out;
}

void PointAddMixed(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2Jacobian& a, const Sm2Affine& b,
                   uint64_t b_is_inf) {
  // madd-2007-bl: 7M + 4S, plus a doubling for the P = Q case.
  uint64_t z1z1[4], u2[4], s2[4], h[4], hh[4], i[4], j[4], rr[4], v[4], t[4];
  Sm2Jacobian out;
  k.fe_sqr(z1z1, a.Z);
  k.fe_mul(u2, b.x, z1z1);
  k.fe_mul(s2, b.y, a.Z);
  k.fe_mul(s2, s2, z1z1);
  FeSub(h, u2, a.X);
  k.fe_sqr(hh, h);
  FeAdd(i, hh, hh);
  FeAdd(i, i, i);
  k.fe_mul(j, h, i);
  FeSub(rr, s2, a.Y);
  FeAdd(rr, rr, rr);
  k.fe_mul(v, a.X, i);
  k.fe_sqr(out.X, rr);
  FeSub(out.X, out.X, j);
  FeSub(out.X, out.X, v);
  FeSub(out.X, out.X, v);
  FeSub(t, v, out.X);
  k.fe_mul(out.Y, t, rr);
  k.fe_mul(t, a.Y, j);
  FeAdd(t, t, t);
  FeSub(out.Y, out.Y, t);
  FeAdd(t, a.Z, h);
  k.fe_sqr(t, t);
  FeSub(t, t, z1z1);
  FeSub(out.Z, t, hh);

  const uint64_t a_inf = FeIsZero(a.Z);
  const uint64_t same = FeIsZero(h) & FeIsZero(rr) & ~a_inf & ~b_is_inf;
  Sm2Jacobian dbl;
  PointDouble(k, &dbl, a);
  JacCmov(&out, dbl, same);
  Sm2Jacobian bj;
  PointFromAffine(&bj, b);
  JacCmov(&out, bj, a_inf);
  JacCmov(&out, a, b_is_inf);
  *r = out;
}

void PointsToAffine(const Sm2Kernels& kern, Sm2Jacobian* pts, size_t count, Sm2Affine* out) {
  // out[i].x holds the prefix product until the backward pass replaces it.
  uint64_t one[4], inv[4], zinv[4], t[4];
  FeSetOne(one);
  for (size_t i = 0; i < count; ++i) {
    FeCmov(pts[i].Z, one, FeIsZero(pts[i].Z));
    if (i == 0) {
      FeCopy(out[0].x, pts[0].Z);
    } else {
      kern.fe_mul(out[i].x, out[i - 1].x, pts[i].Z);
    }
  }
  kern.fe_inv(inv, out[count - 1].x);
  for (size_t i = count; i-- > 0;) {
    if (i > 0) {
      kern.fe_mul(zinv, inv, out[i - 1].x);
      kern.fe_mul(inv, inv, pts[i].Z);
    } else {
      FeCopy(zinv, inv);
    }
    kern.fe_sqr(t, zinv);
    kern.fe_mul(out[i].x, pts[i].X, t);
    kern.fe_mul(t, t, zinv);
    kern.fe_mul(out[i].y, pts[i].Y, t);
  }
  SecureZero(inv, sizeof(inv));
  SecureZero(zinv, sizeof(zinv));
  SecureZero(t, sizeof(t));
}

uint64_t PointToAffine(const Sm2Kernels& k, Sm2Affine* r, const Sm2Jacobian& a) {
  uint64_t zinv[4], zinv2[4];
  FeInv(k, zinv, a.Z);
  k.fe_sqr(zinv2, zinv);
  k.fe_mul(r->x, a.X, zinv2);
  k.fe_mul(zinv2, zinv2, zinv);
  k.fe_mul(r->y, a.Y, zinv2);
  SecureZero(zinv, sizeof(zinv));
  SecureZero(zinv2, sizeof(zinv2));
  return FeIsZero(a.Z);
}

uint64_t AffineIsOnCurve(const Sm2Kernels& k, const Sm2Affine& a) {
  uint64_t lhs[4], rhs[4], t[4];
  k.fe_sqr(lhs, a.y);
  k.fe_sqr(rhs, a.x);
  k.fe_mul(rhs, rhs, a.x);  // x³
  FeAdd(t, a.x, a.x);
  FeAdd(t, t, a.x);  // 3x
  FeSub(rhs, rhs, t);
  FeAdd(rhs, rhs, Consts().b);
  return FeEqual(lhs, rhs);
}

uint64_t BoothRecode(uint64_t in, int w, uint64_t* neg) {
  const uint64_t s = ~((in >> w) - 1);  // ~0 when the top bit of the window is set
  uint64_t d = (uint64_t{1} << (w + 1)) - in - 1;
  d = (d & s) | (in & ~s);
  d = (d >> 1) + (d & 1);
  *neg = s;
  return d;
}

void ScalarMulBase(const Sm2Kernels& k, Sm2Jacobian* r, const uint64_t scalar[4]) {
  k.mul_comb(r, Sm2BaseCombTable(), scalar);
}

void ScalarMulComb(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2CombTable& table,
                   const uint64_t scalar[4]) {
  k.mul_comb(r, table, scalar);
}

void ScalarMulPoint(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2Affine& p,
                    const uint64_t scalar[4]) {
  k.mul_point(r, p, scalar);
}

void ScalarMulTwoVartime(const Sm2Kernels& k, Sm2Jacobian* r, const uint64_t s[4],
                         const Sm2Affine& p, const uint64_t t[4], const Sm2PointTable* p_table) {
  k.mul_two_vartime(r, Sm2BaseCombTable(), s, p, p_table ? &p_table->comb() : nullptr, t);
}

}  // namespace smcrypt::internal
