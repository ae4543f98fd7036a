// Field (mod p) and scalar (mod n) arithmetic of sm2p256v1 against OpenSSL's BIGNUM, on
// random operands from a printed seed plus edge values (0, 1, m − 1, values ≥ m, ...),
// for every SM2 field back end this CPU supports.
#include <cstring>
#include <random>
#include <vector>

#include "crypto/cpu/backends.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_modinv.h"
#include "crypto/sm2/sm2_point.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "tests/crypto/cpu/dispatch_checks.h"
#include "tests/crypto/sm2/sm2_openssl_util.h"
#include "tests/testing/test_util.h"

namespace smcrypt::testing {
namespace {

using internal::Sm2Kernels;

constexpr int kIterations = 10000;

struct Limbs {
  uint64_t v[4];
};

std::string LimbsHex(const uint64_t a[4]) {
  uint8_t buf[32];
  internal::LimbsToBytes(buf, a);
  return BytesToHex(std::string(reinterpret_cast<char*>(buf), 32));
}

// Edges returns edge values around the modulus m, all < 2^256.
std::vector<Limbs> Edges(const uint64_t m[4], bool include_ge_m) {
  BnPtr mb = BnFromLimbs(m);
  std::vector<BnPtr> bns;
  auto add_word = [&](int64_t delta) {
    BnPtr b(BN_dup(mb.get()));
    if (delta < 0) {
      BN_sub_word(b.get(), static_cast<BN_ULONG>(-delta));
    } else {
      BN_add_word(b.get(), static_cast<BN_ULONG>(delta));
    }
    bns.push_back(std::move(b));
  };
  for (int v : {0, 1, 2, 3}) {
    BnPtr b(BN_new());
    BN_set_word(b.get(), v);
    bns.push_back(std::move(b));
  }
  for (int64_t d : {-1, -2, -3}) add_word(d);
  for (int bit : {63, 64, 96, 127, 128, 192, 224, 255}) {
    BnPtr b(BN_new());
    BN_set_bit(b.get(), bit);
    bns.push_back(std::move(b));
    BnPtr c(BN_new());
    BN_set_bit(c.get(), bit);
    BN_sub_word(c.get(), 1);
    bns.push_back(std::move(c));
  }
  {
    BnPtr half(BN_dup(mb.get()));
    BN_rshift1(half.get(), half.get());
    bns.push_back(BnPtr(BN_dup(half.get())));
    BN_add_word(half.get(), 1);
    bns.push_back(std::move(half));
  }
  if (include_ge_m) {
    for (int64_t d : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{0x100000000}}) add_word(d);
    BnPtr top(BN_new());
    BN_set_bit(top.get(), 256);
    BN_sub_word(top.get(), 1);
    bns.push_back(BnPtr(BN_dup(top.get())));
    BN_sub_word(top.get(), 1);
    bns.push_back(std::move(top));
  }
  std::vector<Limbs> out;
  for (const BnPtr& b : bns) {
    if (!include_ge_m && BN_cmp(b.get(), mb.get()) >= 0) continue;
    Limbs l;
    LimbsFromBn(l.v, b.get());
    out.push_back(l);
  }
  return out;
}

// Operand draws an edge value (1 in 8), a value with all-ones / all-zero limbs (1 in 8),
// or a uniform 256-bit value; reduced below m unless include_ge_m.
Limbs Operand(std::mt19937_64& rng, const uint64_t m[4], const std::vector<Limbs>& edges,
              bool include_ge_m) {
  Limbs l;
  const uint64_t pick = rng() % 8;
  if (pick == 0) return edges[rng() % edges.size()];
  for (int j = 0; j < 4; ++j) {
    l.v[j] = rng();
    if (pick == 1) l.v[j] = (rng() & 1) ? ~uint64_t{0} : (rng() & 1 ? 0 : l.v[j]);
  }
  if (!include_ge_m) {
    BnPtr b = BnFromLimbs(l.v), mb = BnFromLimbs(m);
    BnCtxPtr ctx(BN_CTX_new());
    BN_nnmod(b.get(), b.get(), mb.get(), ctx.get());
    LimbsFromBn(l.v, b.get());
  }
  return l;
}

class Sm2FieldTest : public ::testing::TestWithParam<const Sm2Kernels*> {
 protected:
  void SetUp() override {
    const Sm2Kernels& k = *GetParam();
    if (!internal::HasFeatures(GetCpuFeatures(), k.required_features)) {
      GTEST_SKIP() << "back end " << k.name << " needs CPU features "
                   << FormatCpuFeatureList(k.required_features & ~GetCpuFeatures());
    }
    std::cout << "SMCRYPT_TEST_SEED=" << TestSeed() << " back end " << k.name << "\n";
    rng_.seed(TestSeed());
    p_ = BnFromLimbs(internal::kSm2P);
    n_ = BnFromLimbs(internal::kSm2N);
    ctx_.reset(BN_CTX_new());
  }
  const Sm2Kernels& k() const { return *GetParam(); }
  std::mt19937_64 rng_;
  BnPtr p_, n_;
  BnCtxPtr ctx_;
};

TEST_P(Sm2FieldTest, MontgomeryMulAndSqrMatchBignum) {
  const auto edges = Edges(internal::kSm2P, false);
  // R⁻¹ mod p, for checking the raw Montgomery product a·b·R⁻¹.
  BnPtr r(BN_new()), rinv(BN_new());
  BN_set_bit(r.get(), 256);
  ASSERT_NE(BN_mod_inverse(rinv.get(), r.get(), p_.get(), ctx_.get()), nullptr);
  for (int i = 0; i < kIterations; ++i) {
    Limbs a = Operand(rng_, internal::kSm2P, edges, false);
    Limbs b = Operand(rng_, internal::kSm2P, edges, false);
    BnPtr ab = BnFromLimbs(a.v), bb = BnFromLimbs(b.v), want(BN_new()), got_bn;
    // Raw Montgomery multiplication.
    uint64_t got[4];
    k().fe_mul(got, a.v, b.v);
    BN_mod_mul(want.get(), ab.get(), bb.get(), p_.get(), ctx_.get());
    BN_mod_mul(want.get(), want.get(), rinv.get(), p_.get(), ctx_.get());
    got_bn = BnFromLimbs(got);
    ASSERT_EQ(BN_cmp(got_bn.get(), want.get()), 0)
        << "fe_mul a=" << LimbsHex(a.v) << " b=" << LimbsHex(b.v);
    k().fe_sqr(got, a.v);
    BN_mod_mul(want.get(), ab.get(), ab.get(), p_.get(), ctx_.get());
    BN_mod_mul(want.get(), want.get(), rinv.get(), p_.get(), ctx_.get());
    got_bn = BnFromLimbs(got);
    ASSERT_EQ(BN_cmp(got_bn.get(), want.get()), 0) << "fe_sqr a=" << LimbsHex(a.v);
    // Through the Montgomery domain and back: a·b mod p.
    uint64_t am[4], bm[4];
    internal::FeFromPlain(k(), am, a.v);
    internal::FeFromPlain(k(), bm, b.v);
    internal::FeMul(k(), got, am, bm);
    internal::FeToPlain(k(), got, got);
    BN_mod_mul(want.get(), ab.get(), bb.get(), p_.get(), ctx_.get());
    got_bn = BnFromLimbs(got);
    ASSERT_EQ(BN_cmp(got_bn.get(), want.get()), 0)
        << "a*b a=" << LimbsHex(a.v) << " b=" << LimbsHex(b.v);
    // Aliasing: r == a.
    std::memcpy(got, am, sizeof(got));
    k().fe_mul(got, got, bm);
    uint64_t ref[4];
    k().fe_mul(ref, am, bm);
    ASSERT_EQ(std::memcmp(got, ref, sizeof(got)), 0);
  }
}

TEST_P(Sm2FieldTest, AddSubNegMatchBignum) {
  const auto edges = Edges(internal::kSm2P, false);
  for (int i = 0; i < kIterations; ++i) {
    Limbs a = Operand(rng_, internal::kSm2P, edges, false);
    Limbs b = Operand(rng_, internal::kSm2P, edges, false);
    BnPtr ab = BnFromLimbs(a.v), bb = BnFromLimbs(b.v), want(BN_new()), zero(BN_new());
    BN_zero(zero.get());
    uint64_t got[4];
    internal::FeAdd(got, a.v, b.v);
    BN_mod_add(want.get(), ab.get(), bb.get(), p_.get(), ctx_.get());
    ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0)
        << "add a=" << LimbsHex(a.v) << " b=" << LimbsHex(b.v);
    internal::FeSub(got, a.v, b.v);
    BN_mod_sub(want.get(), ab.get(), bb.get(), p_.get(), ctx_.get());
    ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0)
        << "sub a=" << LimbsHex(a.v) << " b=" << LimbsHex(b.v);
    internal::FeNeg(got, a.v);
    BN_mod_sub(want.get(), zero.get(), ab.get(), p_.get(), ctx_.get());
    ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0) << "neg a=" << LimbsHex(a.v);
    ASSERT_EQ(internal::FeIsZero(a.v) != 0, BN_is_zero(ab.get()) == 1);
    ASSERT_EQ(internal::FeEqual(a.v, b.v) != 0, BN_cmp(ab.get(), bb.get()) == 0);
  }
}

TEST_P(Sm2FieldTest, InverseAndSqrtMatchBignum) {
  const auto edges = Edges(internal::kSm2P, false);
  for (int i = 0; i < kIterations / 2; ++i) {
    Limbs a = Operand(rng_, internal::kSm2P, edges, false);
    BnPtr ab = BnFromLimbs(a.v), want(BN_new());
    uint64_t am[4], got[4], sq[4];
    internal::FeFromPlain(k(), am, a.v);
    internal::FeInv(k(), got, am);
    internal::FeToPlain(k(), got, got);
    if (BN_is_zero(ab.get())) {
      ASSERT_TRUE(internal::FeIsZero(got)) << "0^(p-2) must be 0";
    } else {
      ASSERT_NE(BN_mod_inverse(want.get(), ab.get(), p_.get(), ctx_.get()), nullptr);
      ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0) << "inv a=" << LimbsHex(a.v);
    }
    // Square root candidate: a root exactly when OpenSSL finds one.
    internal::FeSqrtCandidate(k(), got, am);
    internal::FeSqr(k(), sq, got);
    const bool is_root = internal::FeEqual(sq, am) != 0;
    ERR_set_mark();
    BIGNUM* root = BN_mod_sqrt(want.get(), ab.get(), p_.get(), ctx_.get());
    ERR_pop_to_mark();
    ASSERT_EQ(is_root, root != nullptr) << "sqrt a=" << LimbsHex(a.v);
  }
}

TEST_P(Sm2FieldTest, BytesConversionRejectsValuesAtOrAboveP) {
  const auto edges = Edges(internal::kSm2P, true);
  for (int i = 0; i < kIterations; ++i) {
    Limbs a = Operand(rng_, internal::kSm2P, edges, true);
    uint8_t in[32], out[32];
    internal::LimbsToBytes(in, a.v);
    uint64_t m[4];
    const uint64_t ok = internal::FeFromBytes(k(), m, in);
    BnPtr ab = BnFromLimbs(a.v);
    const bool below = BN_cmp(ab.get(), p_.get()) < 0;
    ASSERT_EQ(ok != 0, below) << LimbsHex(a.v);
    ASSERT_EQ(internal::LtP(a.v) != 0, below);
    internal::FeToBytes(k(), out, m);
    BN_nnmod(ab.get(), ab.get(), p_.get(), ctx_.get());
    ASSERT_EQ(std::string(reinterpret_cast<char*>(out), 32), BnTo32(ab.get()));
  }
}

TEST_P(Sm2FieldTest, ScalarArithmeticMatchesBignum) {
  const auto edges = Edges(internal::kSm2N, false);
  const auto edges_any = Edges(internal::kSm2N, true);
  for (int i = 0; i < kIterations; ++i) {
    Limbs a = Operand(rng_, internal::kSm2N, edges, false);
    Limbs b = Operand(rng_, internal::kSm2N, edges, false);
    BnPtr ab = BnFromLimbs(a.v), bb = BnFromLimbs(b.v), want(BN_new());
    uint64_t got[4];
    internal::ScAdd(got, a.v, b.v);
    BN_mod_add(want.get(), ab.get(), bb.get(), n_.get(), ctx_.get());
    ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0) << "add " << LimbsHex(a.v);
    internal::ScSub(got, a.v, b.v);
    BN_mod_sub(want.get(), ab.get(), bb.get(), n_.get(), ctx_.get());
    ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0) << "sub " << LimbsHex(a.v);
    internal::ScMul(got, a.v, b.v);
    BN_mod_mul(want.get(), ab.get(), bb.get(), n_.get(), ctx_.get());
    ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0)
        << "mul a=" << LimbsHex(a.v) << " b=" << LimbsHex(b.v);
    if (i % 4 == 0) {
      internal::ScInv(got, a.v);
      if (BN_is_zero(ab.get())) {
        ASSERT_TRUE(internal::ScIsZero(got));
      } else {
        ASSERT_NE(BN_mod_inverse(want.get(), ab.get(), n_.get(), ctx_.get()), nullptr);
        ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0) << "inv " << LimbsHex(a.v);
      }
    }
    // Reduction of any 256-bit value, and the range predicate.
    Limbs c = Operand(rng_, internal::kSm2N, edges_any, true);
    BnPtr cb = BnFromLimbs(c.v);
    ASSERT_EQ(internal::LtN(c.v) != 0, BN_cmp(cb.get(), n_.get()) < 0) << LimbsHex(c.v);
    internal::ScReduceOnce(got, c.v);
    BN_nnmod(want.get(), cb.get(), n_.get(), ctx_.get());
    ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0) << "reduce " << LimbsHex(c.v);
  }
}

TEST_P(Sm2FieldTest, CurveConstantsMatchOpenSsl) {
  GroupPtr group = Sm2Group();
  ASSERT_NE(group, nullptr);
  BnPtr p(BN_new()), a(BN_new()), b(BN_new()), x(BN_new()), y(BN_new());
  ASSERT_EQ(EC_GROUP_get_curve(group.get(), p.get(), a.get(), b.get(), ctx_.get()), 1);
  EXPECT_EQ(BN_cmp(p.get(), p_.get()), 0);
  EXPECT_EQ(BN_cmp(b.get(), BnFromLimbs(internal::kSm2B).get()), 0);
  BN_add_word(a.get(), 3);
  EXPECT_EQ(BN_cmp(a.get(), p_.get()), 0) << "a must be p - 3";
  EXPECT_EQ(BN_cmp(EC_GROUP_get0_order(group.get()), n_.get()), 0);
  ASSERT_EQ(EC_POINT_get_affine_coordinates(group.get(), EC_GROUP_get0_generator(group.get()),
                                            x.get(), y.get(), ctx_.get()),
            1);
  EXPECT_EQ(BN_cmp(x.get(), BnFromLimbs(internal::kSm2Gx).get()), 0);
  EXPECT_EQ(BN_cmp(y.get(), BnFromLimbs(internal::kSm2Gy).get()), 0);
  EXPECT_TRUE(internal::AffineIsOnCurve(k(), internal::Sm2Generator()));
}

std::vector<const Sm2Kernels*> AllKernels() {
  size_t n = 0;
  const Sm2Kernels* const* all = internal::Sm2AllKernelsForTesting(&n);
  return std::vector<const Sm2Kernels*>(all, all + n);
}

INSTANTIATE_TEST_SUITE_P(Backends, Sm2FieldTest, ::testing::ValuesIn(AllKernels()),
                         [](const ::testing::TestParamInfo<const Sm2Kernels*>& info) {
                           return std::string(info.param->name);
                         });

// The safegcd inversion on plain values against BN_mod_inverse: 0 (→ 0), every power of
// two, p − 2^k, values with long runs of equal bits (many divsteps with g even), and
// random values from the printed seed.
TEST(Sm2ModInv, SafegcdMatchesBignum) {
  std::cout << "SMCRYPT_TEST_SEED=" << TestSeed() << "\n";
  std::mt19937_64 rng(TestSeed());
  BnPtr p = BnFromLimbs(internal::kSm2P), want(BN_new());
  BnCtxPtr ctx(BN_CTX_new());
  std::vector<Limbs> in;
  in.push_back(Limbs{{0, 0, 0, 0}});
  for (int bit = 0; bit < 256; ++bit) {
    Limbs a{{0, 0, 0, 0}};
    a.v[bit / 64] = uint64_t{1} << (bit % 64);
    in.push_back(a);  // 2^255 < p
    BnPtr b(BN_new());
    BN_sub(b.get(), p.get(), BnFromLimbs(a.v).get());
    Limbs c;
    LimbsFromBn(c.v, b.get());
    in.push_back(c);
  }
  in.push_back(Limbs{{~0ull, ~0ull, ~0ull, 0x7FFFFFFFFFFFFFFFull}});
  in.push_back(Limbs{{0, 0, 0xFFFFFFFFFFFFFFFFull, 0x00000000FFFFFFFFull}});
  for (int i = 0; i < 3000; ++i) {
    Limbs a;
    for (auto& w : a.v) w = rng();
    BnPtr b = BnFromLimbs(a.v);
    BN_mod(b.get(), b.get(), p.get(), ctx.get());
    LimbsFromBn(a.v, b.get());
    in.push_back(a);
  }
  for (const Limbs& a : in) {
    uint64_t got[4];
    internal::Sm2ModInvP(got, a.v);
    BnPtr ab = BnFromLimbs(a.v);
    if (BN_is_zero(ab.get())) {
      EXPECT_EQ(got[0] | got[1] | got[2] | got[3], 0u);
      continue;
    }
    ASSERT_NE(BN_mod_inverse(want.get(), ab.get(), p.get(), ctx.get()), nullptr);
    ASSERT_EQ(BN_cmp(BnFromLimbs(got).get(), want.get()), 0) << "a = " << LimbsHex(a.v);
  }
}

TEST(Sm2Dispatch, ActiveKernelIsFirstCapableInPriorityOrder) {
  size_t n = 0;
  const Sm2Kernels* const* all = internal::Sm2AllKernelsForTesting(&n);
  ASSERT_GT(n, 0u);
  EXPECT_STREQ(all[n - 1]->name, "generic");
  const char* expected = nullptr;
  const auto table = internal::Sm2DispatchTableForTesting();
  ASSERT_EQ(table.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(table[i].kernels, all[i]);
    if (expected == nullptr && table[i].capable(GetCpuFeatures(), GetCpuIdentity())) {
      expected = all[i]->name;
    }
  }
  EXPECT_STREQ(internal::Sm2ActiveKernelName(), expected);
}

TEST(Sm2Dispatch, CapableImpliesRequiredFeatures) {
  ExpectPredicatesNeedFeatures(internal::Sm2DispatchTableForTesting());
}

}  // namespace
}  // namespace smcrypt::testing
