// Point arithmetic and scalar multiplication on sm2p256v1 against OpenSSL's EC_POINT_mul:
// k·G (fixed-base comb) and k·P (variable-base windows) on random and edge scalars
// (0, 1, n − 1, n, n + 1, 2^256 − 1, small values, all-ones window patterns), the special
// cases of the complete additions, and s·G + t·P.
#include <cstring>
#include <random>
#include <vector>

#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_point.h"
#include "gtest/gtest.h"
#include "tests/crypto/sm2/sm2_openssl_util.h"
#include "tests/testing/test_util.h"

namespace smcrypt::testing {
namespace {

using internal::Sm2Affine;
using internal::Sm2Jacobian;
using internal::Sm2Kernels;

struct Scalar {
  uint64_t v[4];
};

class Sm2PointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::cout << "SMCRYPT_TEST_SEED=" << TestSeed() << "\n";
    rng_.seed(TestSeed());
    group_ = Sm2Group();
    ASSERT_NE(group_, nullptr);
    ctx_.reset(BN_CTX_new());
  }

  // Affine returns our point as (x ‖ y) plain bytes, or "inf".
  std::string Ours(const Sm2Jacobian& j) {
    Sm2Affine a;
    if (internal::PointToAffine(k_, &a, j)) return "inf";
    uint8_t buf[64];
    internal::FeToBytes(k_, buf, a.x);
    internal::FeToBytes(k_, buf + 32, a.y);
    return BytesToHex(std::string(reinterpret_cast<char*>(buf), 64));
  }

  std::string Theirs(const EC_POINT* p) {
    if (EC_POINT_is_at_infinity(group_.get(), p)) return "inf";
    BnPtr x(BN_new()), y(BN_new());
    EXPECT_EQ(EC_POINT_get_affine_coordinates(group_.get(), p, x.get(), y.get(), ctx_.get()), 1);
    return BytesToHex(BnTo32(x.get()) + BnTo32(y.get()));
  }

  std::vector<Scalar> EdgeScalars() {
    std::vector<Scalar> out;
    auto push_bn = [&](const BIGNUM* b) {
      Scalar s;
      LimbsFromBn(s.v, b);
      out.push_back(s);
    };
    for (int v = 0; v <= 40; ++v) out.push_back(Scalar{{static_cast<uint64_t>(v), 0, 0, 0}});
    BnPtr n = BnFromLimbs(internal::kSm2N);
    for (int d = -3; d <= 3; ++d) {
      BnPtr b(BN_dup(n.get()));
      if (d < 0) BN_sub_word(b.get(), -d); else BN_add_word(b.get(), d);
      push_bn(b.get());
    }
    out.push_back(Scalar{{~0ull, ~0ull, ~0ull, ~0ull}});
    out.push_back(Scalar{{0, 0, 0, 1ull << 63}});
    out.push_back(Scalar{{~0ull, ~0ull, ~0ull, ~0ull >> 1}});
    // Booth windows of all ones / alternating bits stress the carries between digits.
    out.push_back(Scalar{{0x5555555555555555ull, 0x5555555555555555ull, 0x5555555555555555ull,
                          0x5555555555555555ull}});
    out.push_back(Scalar{{0xAAAAAAAAAAAAAAAAull, 0xAAAAAAAAAAAAAAAAull, 0xAAAAAAAAAAAAAAAAull,
                          0xAAAAAAAAAAAAAAAAull}});
    out.push_back(Scalar{{0xFC0FC0FC0FC0FC0Full, 0x0FC0FC0FC0FC0FC0ull, 0xC0FC0FC0FC0FC0FCull,
                          0xFC0FC0FC0FC0FC0Full}});
    out.push_back(Scalar{{0x0842108421084210ull, 0x8421084210842108ull, 0x4210842108421084ull,
                          0x2108421084210842ull}});
    return out;
  }

  Scalar RandomScalar() {
    Scalar s;
    for (auto& w : s.v) w = rng_();
    return s;
  }

  const Sm2Kernels& k_ = internal::Sm2ActiveKernels();
  std::mt19937_64 rng_;
  GroupPtr group_;
  BnCtxPtr ctx_;
};

TEST_F(Sm2PointTest, FixedBaseMatchesOpenSsl) {
  std::vector<Scalar> scalars = EdgeScalars();
  for (int i = 0; i < 1000; ++i) scalars.push_back(RandomScalar());
  PointPtr want(EC_POINT_new(group_.get()));
  for (const Scalar& s : scalars) {
    Sm2Jacobian got;
    internal::ScalarMulBase(k_, &got, s.v);
    BnPtr sb = BnFromLimbs(s.v);
    ASSERT_EQ(EC_POINT_mul(group_.get(), want.get(), sb.get(), nullptr, nullptr, ctx_.get()), 1);
    uint8_t buf[32];
    internal::LimbsToBytes(buf, s.v);
    ASSERT_EQ(Ours(got), Theirs(want.get()))
        << "k = " << BytesToHex(std::string(reinterpret_cast<char*>(buf), 32));
  }
}

TEST_F(Sm2PointTest, VariableBaseMatchesOpenSsl) {
  std::vector<Scalar> scalars = EdgeScalars();
  for (int i = 0; i < 300; ++i) scalars.push_back(RandomScalar());
  PointPtr p(EC_POINT_new(group_.get())), want(EC_POINT_new(group_.get()));
  for (size_t i = 0; i < scalars.size(); ++i) {
    // A fresh random base point P = u·G every few scalars (and G itself first).
    if (i % 8 == 0) {
      BnPtr u = BnFromLimbs(RandomScalar().v);
      if (i == 0) BN_one(u.get());
      ASSERT_EQ(EC_POINT_mul(group_.get(), p.get(), u.get(), nullptr, nullptr, ctx_.get()), 1);
    }
    BnPtr x(BN_new()), y(BN_new());
    ASSERT_EQ(EC_POINT_get_affine_coordinates(group_.get(), p.get(), x.get(), y.get(),
                                              ctx_.get()),
              1);
    Sm2Affine pa;
    uint64_t xl[4], yl[4];
    LimbsFromBn(xl, x.get());
    LimbsFromBn(yl, y.get());
    internal::FeFromPlain(k_, pa.x, xl);
    internal::FeFromPlain(k_, pa.y, yl);
    ASSERT_TRUE(internal::AffineIsOnCurve(k_, pa));
    Sm2Jacobian got;
    internal::ScalarMulPoint(k_, &got, pa, scalars[i].v);
    BnPtr sb = BnFromLimbs(scalars[i].v);
    ASSERT_EQ(EC_POINT_mul(group_.get(), want.get(), nullptr, p.get(), sb.get(), ctx_.get()), 1);
    ASSERT_EQ(Ours(got), Theirs(want.get())) << "scalar #" << i;
  }
}

TEST_F(Sm2PointTest, TwoScalarMultiplicationMatchesOpenSsl) {
  PointPtr p(EC_POINT_new(group_.get())), want(EC_POINT_new(group_.get()));
  for (int i = 0; i < 200; ++i) {
    Scalar u = RandomScalar(), s = RandomScalar(), t = RandomScalar();
    if (i == 0) t = s;  // s·G + s·G: the doubling case of the final addition
    BnPtr ub = BnFromLimbs(u.v), sb = BnFromLimbs(s.v), tb = BnFromLimbs(t.v);
    if (i == 0) BN_one(ub.get());
    ASSERT_EQ(EC_POINT_mul(group_.get(), p.get(), ub.get(), nullptr, nullptr, ctx_.get()), 1);
    BnPtr x(BN_new()), y(BN_new());
    EC_POINT_get_affine_coordinates(group_.get(), p.get(), x.get(), y.get(), ctx_.get());
    Sm2Affine pa;
    uint64_t xl[4], yl[4];
    LimbsFromBn(xl, x.get());
    LimbsFromBn(yl, y.get());
    internal::FeFromPlain(k_, pa.x, xl);
    internal::FeFromPlain(k_, pa.y, yl);
    Sm2Jacobian got;
    internal::ScalarMulTwoVartime(k_, &got, s.v, pa, t.v);
    ASSERT_EQ(EC_POINT_mul(group_.get(), want.get(), sb.get(), p.get(), tb.get(), ctx_.get()), 1);
    ASSERT_EQ(Ours(got), Theirs(want.get())) << "i = " << i;
  }
  // s·G + t·G with s + t = n is the point at infinity.
  BnPtr n = BnFromLimbs(internal::kSm2N);
  Scalar s = RandomScalar();
  s.v[3] >>= 1;
  BnPtr sb = BnFromLimbs(s.v), tb(BN_new());
  BN_sub(tb.get(), n.get(), sb.get());
  Scalar t;
  LimbsFromBn(t.v, tb.get());
  Sm2Jacobian got;
  internal::ScalarMulTwoVartime(k_, &got, s.v, internal::Sm2Generator(), t.v);
  EXPECT_EQ(Ours(got), "inf");
}

TEST_F(Sm2PointTest, CompleteAdditionSpecialCases) {
  const Sm2Affine& g = internal::Sm2Generator();
  Sm2Jacobian gj, two_g, sum, inf, neg_g;
  internal::PointFromAffine(&gj, g);
  internal::PointDouble(k_, &two_g, gj);
  std::memset(&inf, 0, sizeof(inf));
  neg_g = gj;
  internal::FeNeg(neg_g.Y, gj.Y);
  // Make the Jacobian representation non-trivial: (X·λ², Y·λ³, λ).
  Sm2Jacobian g_scaled = gj;
  uint64_t lambda[4] = {0x1234, 0x5678, 0x9abc, 0xdef0}, l2[4], l3[4];
  internal::FeFromPlain(k_, lambda, lambda);
  internal::FeSqr(k_, l2, lambda);
  internal::FeMul(k_, l3, l2, lambda);
  internal::FeMul(k_, g_scaled.X, gj.X, l2);
  internal::FeMul(k_, g_scaled.Y, gj.Y, l3);
  internal::FeCopy(g_scaled.Z, lambda);

  internal::PointAdd(k_, &sum, gj, g_scaled);  // P + P
  EXPECT_EQ(Ours(sum), Ours(two_g));
  internal::PointAdd(k_, &sum, g_scaled, neg_g);  // P + (−P)
  EXPECT_EQ(Ours(sum), "inf");
  internal::PointAdd(k_, &sum, inf, g_scaled);  // O + P
  EXPECT_EQ(Ours(sum), Ours(gj));
  internal::PointAdd(k_, &sum, g_scaled, inf);  // P + O
  EXPECT_EQ(Ours(sum), Ours(gj));
  internal::PointAdd(k_, &sum, inf, inf);
  EXPECT_EQ(Ours(sum), "inf");
  internal::PointDouble(k_, &sum, inf);
  EXPECT_EQ(Ours(sum), "inf");

  internal::PointAddMixed(k_, &sum, g_scaled, g, 0);  // P + P (mixed)
  EXPECT_EQ(Ours(sum), Ours(two_g));
  Sm2Affine neg_ga = g;
  internal::FeNeg(neg_ga.y, g.y);
  internal::PointAddMixed(k_, &sum, g_scaled, neg_ga, 0);  // P + (−P)
  EXPECT_EQ(Ours(sum), "inf");
  internal::PointAddMixed(k_, &sum, inf, g, 0);  // O + P
  EXPECT_EQ(Ours(sum), Ours(gj));
  internal::PointAddMixed(k_, &sum, g_scaled, g, ~0ull);  // P + O
  EXPECT_EQ(Ours(sum), Ours(gj));
  internal::PointAddMixed(k_, &sum, inf, g, ~0ull);  // O + O
  EXPECT_EQ(Ours(sum), "inf");
  // Generic addition agrees with OpenSSL: G + 2G = 3G.
  internal::PointAdd(k_, &sum, two_g, g_scaled);
  Sm2Jacobian three;
  const uint64_t three_s[4] = {3, 0, 0, 0};
  internal::ScalarMulBase(k_, &three, three_s);
  EXPECT_EQ(Ours(sum), Ours(three));
}

TEST(Sm2Booth, RecodingReconstructsTheScalar) {
  // Σ digit_i·2^(w·i) over all windows equals the scalar, for w = 5 and 6.
  std::mt19937_64 rng(TestSeed());
  BnCtxPtr ctx(BN_CTX_new());
  for (int w : {5, 6}) {
    const int windows = (257 + w - 1) / w;  // 43 for w = 6, 52 for w = 5
    for (int it = 0; it < 2000; ++it) {
      uint64_t s[4];
      for (auto& v : s) v = rng();
      if (it == 0) std::memset(s, 0xff, sizeof(s));
      BnPtr acc(BN_new()), term(BN_new());
      BN_zero(acc.get());
      for (int i = 0; i < windows; ++i) {
        uint64_t win = 0;
        for (int b = 0; b <= w; ++b) {
          const int pos = w * i - 1 + b;
          if (pos >= 0 && pos < 256) win |= ((s[pos / 64] >> (pos % 64)) & 1) << b;
        }
        uint64_t neg;
        const uint64_t d = internal::BoothRecode(win, w, &neg);
        ASSERT_LE(d, uint64_t{1} << (w - 1));
        BN_set_word(term.get(), d);
        BN_lshift(term.get(), term.get(), w * i);
        if (neg) BN_set_negative(term.get(), 1);
        BN_add(acc.get(), acc.get(), term.get());
      }
      ASSERT_EQ(BN_cmp(acc.get(), BnFromLimbs(s).get()), 0) << "w = " << w;
    }
  }
}

}  // namespace
}  // namespace smcrypt::testing
