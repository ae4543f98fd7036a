// sm2_comb_table.cc — comb tables for fixed-base multiplication: the one for G (signed
// 7-bit windows, 37 × 64 affine points), built once on first use, and per-point tables
// (signed 5-bit windows, 52 × 16) for public keys used repeatedly.
//
// Entry [i][j] = (j + 1)·2^(w·i)·P, affine, Montgomery form (identical on every back
// end). Tables are built from public points with the complete point operations and one
// batched inversion (Montgomery's trick) for all entries.
//
// Constant-time review: only public data (G, public keys) is processed here; the tables
// are read by the back ends' comb loops with full-row masked selects.
#include <new>
#include <vector>

#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_point.h"

namespace smcrypt::internal {
namespace {

constexpr int kBaseW = 7;
constexpr int kBaseWindows = 37;  // 37·7 = 259 ≥ 256 + 1 sign bit
constexpr int kKeyW = kSm2PointTableW;
constexpr int kKeyWindows = kSm2PointTableWindows;

// FillComb writes windows × 2^(w−1) affine entries of P's comb to out.
void FillComb(const Sm2Kernels& k, const Sm2Affine& p, int w, int windows, Sm2Affine* out) {
  const int n = 1 << (w - 1);
  const size_t total = static_cast<size_t>(windows) * n;
  std::vector<Sm2Jacobian> jac(total);
  Sm2Jacobian base;
  PointFromAffine(&base, p);
  for (int i = 0; i < windows; ++i) {
    Sm2Jacobian* row = &jac[static_cast<size_t>(i) * n];
    row[0] = base;
    PointDouble(k, &row[1], base);
    for (int j = 2; j < n; ++j) PointAdd(k, &row[j], row[j - 1], base);
    PointDouble(k, &base, row[n - 1]);  // 2^w·base = 2·(2^(w−1)·base)
  }
  // Batched inversion of every Z. No entry is at infinity: (j + 1)·2^(wi) is not a
  // multiple of the odd prime n, since j + 1 ≤ 64 < n.
  PointsToAffine(k, jac.data(), total, out);
}

}  // namespace

const Sm2CombTable& Sm2BaseCombTable() {
  static const Sm2CombTable table = [] {
    const size_t total = static_cast<size_t>(kBaseWindows) << (kBaseW - 1);
    // 64-byte alignment: each entry is one cache line. Never freed (process lifetime).
    auto* points = static_cast<Sm2Affine*>(
        ::operator new(total * sizeof(Sm2Affine), std::align_val_t{64}));
    FillComb(kSm2KernelsGeneric, Sm2Generator(), kBaseW, kBaseWindows, points);
    return Sm2CombTable{kBaseW, kBaseWindows, points};
  }();
  return table;
}

std::unique_ptr<Sm2PointTable> Sm2PointTable::Build(const Sm2Kernels& k, const Sm2Affine& p) {
  std::unique_ptr<Sm2PointTable> t(new Sm2PointTable);
  t->points_.resize(static_cast<size_t>(kKeyWindows) << (kKeyW - 1));
  FillComb(k, p, kKeyW, kKeyWindows, t->points_.data());
  t->comb_ = Sm2CombTable{kKeyW, kKeyWindows, t->points_.data()};
  if (Sm2IfmaSupported()) {
    t->points52_.resize(t->points_.size() * kSm2IfmaPointWords);
    for (size_t i = 0; i < t->points_.size(); ++i) {
      Sm2AffineToIfma(t->points_[i], &t->points52_[i * kSm2IfmaPointWords]);
    }
  }
  return t;
}

}  // namespace smcrypt::internal
