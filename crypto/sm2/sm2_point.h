// sm2_point.h — points on sm2p256v1 (y² = x³ − 3x + b over GF(p), prime order n, h = 1)
// and scalar multiplication.
//
// Coordinates are field elements in Montgomery form (sm2_field.h). Jacobian (X, Y, Z)
// stands for (X/Z², Y/Z³); Z = 0 is the point at infinity.
//
// Special cases: PointAdd and PointAddMixed are complete. They always compute both the
// generic sum (add-2007-bl / madd-2007-bl) and the doubling of the first input
// (dbl-2001-b, a = −3), then pick the right result with masks for each case (either
// input at infinity, P = Q, P = −Q gives Z = 0 by itself), so they are correct and
// constant time on every input, including inputs derived from secrets.
//
// Constant time: ScalarMulBase, ScalarMulComb and ScalarMulPoint take a secret scalar;
// they use signed fixed windows (Booth recoding without branches) and read every table
// entry with masks for each digit. ScalarMulTwoVartime is for public scalars
// (verification) only. The scalar multiplications run inside the back end
// (Sm2Kernels::mul_*); the single point operations here go through fe_mul/fe_sqr and
// serve table construction and tests.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_POINT_H_
#define SMCRYPT_CRYPTO_SM2_SM2_POINT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "crypto/sm2/sm2_field.h"

namespace smcrypt::internal {

// Sm2CurveB and the generator, Montgomery form (computed once).
const uint64_t* Sm2CurveB();
const Sm2Affine& Sm2Generator();

// PointDouble sets r = 2a (r may alias a).
void PointDouble(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2Jacobian& a);
// PointAdd sets r = a + b for any inputs (complete, constant time). r may alias.
void PointAdd(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2Jacobian& a, const Sm2Jacobian& b);
// PointAddMixed sets r = a + b where b is affine, or the point at infinity when
// b_is_inf = ~0 (complete, constant time). r may alias a.
void PointAddMixed(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2Jacobian& a, const Sm2Affine& b,
                   uint64_t b_is_inf);
// PointToAffine converts a; returns ~0 (and zero coordinates) when a is infinity.
uint64_t PointToAffine(const Sm2Kernels& k, Sm2Affine* r, const Sm2Jacobian& a);
// PointsToAffine sets out[i] to the affine form of pts[i] for i < count (count ≥ 1) with
// one field inversion (Montgomery's trick: prefix products Z_0⋯Z_i, one inversion, then
// each Z_i⁻¹ back from the prefixes), constant time. A Z of 0 (the point at infinity) is
// replaced by 1 with a mask so it cannot zero the other points' inverses; that point's
// output is then meaningless (callers exclude infinity). pts[i].Z is overwritten.
void PointsToAffine(const Sm2Kernels& k, Sm2Jacobian* pts, size_t count, Sm2Affine* out);
// PointFromAffine sets Z = 1.
void PointFromAffine(Sm2Jacobian* r, const Sm2Affine& a);
// AffineIsOnCurve returns ~0 if y² = x³ − 3x + b.
uint64_t AffineIsOnCurve(const Sm2Kernels& k, const Sm2Affine& a);

// Sm2BaseCombTable is the fixed-base comb for G: signed 7-bit windows, 37 windows × 64
// affine points (j·2^(7i)·G, 151,552 bytes), built once on first use (sm2_comb_table.cc).
const Sm2CombTable& Sm2BaseCombTable();

// The comb of Sm2PointTable: signed 5-bit windows, 52 of them (52·5 = 260 bits cover a
// 256-bit scalar and its Booth carry).
inline constexpr int kSm2PointTableW = 5;
inline constexpr int kSm2PointTableWindows = 52;

// Sm2PointTable is a comb table for one public point P (signed 5-bit windows, 52 × 16
// affine points, 53,248 bytes), for public keys used repeatedly: verification,
// encryption. Building costs about as much as 40 verifications.
class Sm2PointTable {
 public:
  static std::unique_ptr<Sm2PointTable> Build(const Sm2Kernels& k, const Sm2Affine& p);
  const Sm2CombTable& comb() const { return comb_; }
  // points52 is the same table in the words of the IFMA batch kernels (sm2_batch.h,
  // kSm2IfmaPointWords per point, 66,560 bytes), or nullptr when the table was built on a
  // CPU without them.
  const uint64_t* points52() const { return points52_.empty() ? nullptr : points52_.data(); }

 private:
  Sm2PointTable() = default;
  std::vector<Sm2Affine> points_;
  std::vector<uint64_t> points52_;
  Sm2CombTable comb_{};
};

// ScalarMulBase sets r = scalar·G for a 256-bit scalar (plain limbs, any value < 2^256)
// with the back end's constant-time comb over Sm2BaseCombTable(): one mixed addition per
// window, no doublings, every table row read in full with masks.
void ScalarMulBase(const Sm2Kernels& k, Sm2Jacobian* r, const uint64_t scalar[4]);
// ScalarMulComb is ScalarMulBase over the comb table of another point (constant time in
// `scalar`; the table is public).
void ScalarMulComb(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2CombTable& table,
                   const uint64_t scalar[4]);
// ScalarMulPoint sets r = scalar·p: signed 5-bit windows over 1p … 16p (Jacobian),
// 5 doublings and one complete addition per window. Constant time in `scalar`.
void ScalarMulPoint(const Sm2Kernels& k, Sm2Jacobian* r, const Sm2Affine& p,
                    const uint64_t scalar[4]);
// ScalarMulTwoVartime sets r = s·G + t·p for PUBLIC s, t (verification only): s·G from
// the comb table of G, t·p from `p_table` when given, else by width-5 wNAF. VARIABLE TIME.
void ScalarMulTwoVartime(const Sm2Kernels& k, Sm2Jacobian* r, const uint64_t s[4],
                         const Sm2Affine& p, const uint64_t t[4],
                         const Sm2PointTable* p_table = nullptr);

// Booth recoding of one window of w+1 bits (BoringSSL's ec_GFp_nistp_recode_scalar_bits):
// returns the digit magnitude in [0, 2^(w−1)] and sets *neg to ~0 for a negative digit.
// Branch-free.
uint64_t BoothRecode(uint64_t window, int w, uint64_t* neg);

}  // namespace smcrypt::internal

#endif  // SMCRYPT_CRYPTO_SM2_SM2_POINT_H_
