// Every SM2 back end against `generic` and against OpenSSL's EC arithmetic: fixed-base
// comb (G's 7-bit table and per-key 5-bit tables), constant-time variable-base windows and
// the variable-time double-scalar multiplication of verification, on random scalars from a
// printed seed plus edge scalars (0, 1, 2, n − 2, n − 1, n, n + 1, n ± 2j for j ≤ 16
// (doublings inside the variable-base multiplication's last addition), every power of two,
// 2^256 − 1, values ≥ n, and the scalars closest to a doubling inside the comb's last
// addition), the point at infinity and the doubling case inside an addition; then signing,
// verification, encryption and decryption through the public API with each back end forced
// by Sm2SetKernelsForTesting, cross-checked with OpenSSL's BIGNUM/EC_POINT arithmetic in
// both directions, and the GB/T 32918.5 examples.
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "crypto/common/bytes.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_key_cache.h"
#include "crypto/sm2/sm2_point.h"
#include "crypto/sm2/sm2_testing.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm2.h"
#include "tests/crypto/sm2/sm2_openssl_util.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt::testing {
namespace {

using internal::Sm2Affine;
using internal::Sm2Jacobian;
using internal::Sm2Kernels;

struct Scalar {
  uint64_t v[4];
};

std::vector<const Sm2Kernels*> AllKernels() {
  size_t n = 0;
  const Sm2Kernels* const* all = internal::Sm2AllKernelsForTesting(&n);
  return std::vector<const Sm2Kernels*>(all, all + n);
}

// Affine bytes x ‖ y of a Jacobian point (through the generic back end), or "inf".
std::string AffineHex(const Sm2Jacobian& j) {
  const Sm2Kernels& g = internal::kSm2KernelsGeneric;
  Sm2Affine a;
  if (internal::PointToAffine(g, &a, j)) return "inf";
  uint8_t buf[64];
  internal::FeToBytes(g, buf, a.x);
  internal::FeToBytes(g, buf + 32, a.y);
  return BytesToHex(std::string(reinterpret_cast<char*>(buf), 64));
}

std::vector<Scalar> EdgeScalars() {
  std::vector<Scalar> out;
  for (uint64_t v : {0, 1, 2, 3, 63, 64, 65, 127, 128}) out.push_back(Scalar{{v, 0, 0, 0}});
  BnPtr n = BnFromLimbs(internal::kSm2N);
  for (int d = -3; d <= 3; ++d) {
    BnPtr b(BN_dup(n.get()));
    if (d < 0) BN_sub_word(b.get(), -d); else BN_add_word(b.get(), d);
    Scalar s;
    LimbsFromBn(s.v, b.get());
    out.push_back(s);
  }
  // s = n ± 2j: the last window of the variable-base multiplication adds d·P to an
  // accumulator equal to d·P (a doubling inside its addition) for s ≡ 2d (mod n), e.g.
  // n − 6 (d = −3).
  for (int j = 1; j <= 16; ++j) {
    for (int sign : {-1, 1}) {
      BnPtr b(BN_dup(n.get()));
      if (sign < 0) BN_sub_word(b.get(), 2 * j); else BN_add_word(b.get(), 2 * j);
      Scalar s;
      LimbsFromBn(s.v, b.get());
      out.push_back(s);
    }
  }
  for (int bit = 0; bit < 256; ++bit) {
    Scalar s{{0, 0, 0, 0}};
    s.v[bit / 64] = uint64_t{1} << (bit % 64);
    out.push_back(s);
  }
  out.push_back(Scalar{{~0ull, ~0ull, ~0ull, ~0ull}});
  out.push_back(Scalar{{~0ull, ~0ull, ~0ull, ~0ull >> 1}});
  // Last comb window: top digits 15 and 16 (w = 7, bit 252) and 1 and 2 (w = 5, bit 255)
  // with the largest |A| below them: the nearest a doubling could come.
  out.push_back(Scalar{{0, 0, 0, 0xF800000000000000ull}});  // 2^256 − 2^251
  out.push_back(Scalar{{~0ull, ~0ull, ~0ull, 0xF7FFFFFFFFFFFFFFull}});
  out.push_back(Scalar{{0, 0, 0, 0xC000000000000000ull}});
  out.push_back(Scalar{{~0ull, ~0ull, ~0ull, 0xBFFFFFFFFFFFFFFFull}});
  out.push_back(Scalar{{0, 0, 0, 0x4000000000000000ull}});
  out.push_back(Scalar{{0x5555555555555555ull, 0xAAAAAAAAAAAAAAAAull, 0x5555555555555555ull,
                        0xAAAAAAAAAAAAAAAAull}});
  out.push_back(Scalar{{0x0102040810204081ull, 0x0204081020408102ull, 0x0408102040810204ull,
                        0x0810204081020408ull}});
  return out;
}

class Sm2BackendsTest : public ::testing::TestWithParam<const Sm2Kernels*> {
 protected:
  void SetUp() override {
    const Sm2Kernels& k = *GetParam();
    if (!internal::HasFeatures(GetCpuFeatures(), k.required_features)) {
      GTEST_SKIP() << "back end " << k.name << " needs CPU features "
                   << FormatCpuFeatureList(k.required_features & ~GetCpuFeatures());
    }
    std::cout << "SMCRYPT_TEST_SEED=" << TestSeed() << " back end " << k.name << "\n";
    rng_.seed(TestSeed());
    group_ = Sm2Group();
    ASSERT_NE(group_, nullptr);
    ctx_.reset(BN_CTX_new());
    internal::Sm2SetKernelsForTesting(&k);
  }
  void TearDown() override { internal::Sm2SetKernelsForTesting(nullptr); }

  const Sm2Kernels& k() const { return *GetParam(); }
  Scalar RandomScalar() {
    Scalar s;
    for (auto& w : s.v) w = rng_();
    return s;
  }
  std::string Theirs(const EC_POINT* p) {
    if (EC_POINT_is_at_infinity(group_.get(), p)) return "inf";
    BnPtr x(BN_new()), y(BN_new());
    EXPECT_EQ(EC_POINT_get_affine_coordinates(group_.get(), p, x.get(), y.get(), ctx_.get()), 1);
    return BytesToHex(BnTo32(x.get()) + BnTo32(y.get()));
  }
  // A random point u·G, as our affine point and OpenSSL's.
  void RandomPoint(Sm2Affine* ours, PointPtr* theirs) {
    Scalar u = RandomScalar();
    BnPtr ub = BnFromLimbs(u.v);
    theirs->reset(EC_POINT_new(group_.get()));
    ASSERT_EQ(EC_POINT_mul(group_.get(), theirs->get(), ub.get(), nullptr, nullptr, ctx_.get()),
              1);
    BnPtr x(BN_new()), y(BN_new());
    ASSERT_EQ(EC_POINT_get_affine_coordinates(group_.get(), theirs->get(), x.get(), y.get(),
                                              ctx_.get()),
              1);
    uint64_t xl[4], yl[4];
    LimbsFromBn(xl, x.get());
    LimbsFromBn(yl, y.get());
    internal::FeFromPlain(k(), ours->x, xl);
    internal::FeFromPlain(k(), ours->y, yl);
  }

  std::mt19937_64 rng_;
  GroupPtr group_;
  BnCtxPtr ctx_;
};

TEST_P(Sm2BackendsTest, FixedBaseCombMatchesGenericAndOpenSsl) {
  const Sm2Kernels& gen = internal::kSm2KernelsGeneric;
  const internal::Sm2CombTable& table = internal::Sm2BaseCombTable();
  std::vector<Scalar> scalars = EdgeScalars();
  const size_t edges = scalars.size();
  for (int i = 0; i < 10000; ++i) scalars.push_back(RandomScalar());
  PointPtr want(EC_POINT_new(group_.get()));
  for (size_t i = 0; i < scalars.size(); ++i) {
    Sm2Jacobian got, ref;
    k().mul_comb(&got, table, scalars[i].v);
    gen.mul_comb(&ref, table, scalars[i].v);
    const std::string got_hex = AffineHex(got);
    ASSERT_EQ(got_hex, AffineHex(ref)) << "scalar #" << i;
    if (i < edges || i % 50 == 0) {  // OpenSSL for the edges and a sample of the rest
      BnPtr sb = BnFromLimbs(scalars[i].v);
      ASSERT_EQ(EC_POINT_mul(group_.get(), want.get(), sb.get(), nullptr, nullptr, ctx_.get()),
                1);
      ASSERT_EQ(got_hex, Theirs(want.get())) << "scalar #" << i;
    }
  }
}

TEST_P(Sm2BackendsTest, VariableBaseAndKeyCombMatchOpenSsl) {
  const Sm2Kernels& gen = internal::kSm2KernelsGeneric;
  std::vector<Scalar> scalars = EdgeScalars();
  for (int i = 0; i < 400; ++i) scalars.push_back(RandomScalar());
  Sm2Affine p;
  PointPtr pp, want(EC_POINT_new(group_.get()));
  std::unique_ptr<internal::Sm2PointTable> table;
  for (size_t i = 0; i < scalars.size(); ++i) {
    if (i % 100 == 0) {
      ASSERT_NO_FATAL_FAILURE(RandomPoint(&p, &pp));
      table = internal::Sm2PointTable::Build(k(), p);
    }
    Sm2Jacobian got, ref, comb;
    k().mul_point(&got, p, scalars[i].v);
    gen.mul_point(&ref, p, scalars[i].v);
    k().mul_comb(&comb, table->comb(), scalars[i].v);
    BnPtr sb = BnFromLimbs(scalars[i].v);
    ASSERT_EQ(EC_POINT_mul(group_.get(), want.get(), nullptr, pp.get(), sb.get(), ctx_.get()), 1);
    const std::string theirs = Theirs(want.get());
    ASSERT_EQ(AffineHex(got), theirs) << "mul_point scalar #" << i;
    ASSERT_EQ(AffineHex(ref), theirs) << "generic mul_point scalar #" << i;
    ASSERT_EQ(AffineHex(comb), theirs) << "key comb scalar #" << i;
  }
}

TEST_P(Sm2BackendsTest, DoubleScalarVartimeMatchesOpenSsl) {
  const internal::Sm2CombTable& g = internal::Sm2BaseCombTable();
  PointPtr want(EC_POINT_new(group_.get()));
  const std::vector<Scalar> edges = EdgeScalars();
  for (int i = 0; i < 300; ++i) {
    Sm2Affine p;
    PointPtr pp;
    ASSERT_NO_FATAL_FAILURE(RandomPoint(&p, &pp));
    Scalar s = i < 40 ? edges[i % edges.size()] : RandomScalar();
    Scalar t = i < 40 ? edges[(i * 7 + 3) % edges.size()] : RandomScalar();
    std::unique_ptr<internal::Sm2PointTable> table;
    if (i % 3 == 0) table = internal::Sm2PointTable::Build(k(), p);
    Sm2Jacobian got;
    k().mul_two_vartime(&got, g, s.v, p, table ? &table->comb() : nullptr, t.v);
    BnPtr sb = BnFromLimbs(s.v), tb = BnFromLimbs(t.v);
    ASSERT_EQ(EC_POINT_mul(group_.get(), want.get(), sb.get(), pp.get(), tb.get(), ctx_.get()), 1);
    ASSERT_EQ(AffineHex(got), Theirs(want.get())) << "i = " << i;
  }
  // P = G: s·G + s·G doubles inside the final additions; s·G + (n − s)·G is infinity.
  const Sm2Affine& gen = internal::Sm2Generator();
  std::unique_ptr<internal::Sm2PointTable> gtable = internal::Sm2PointTable::Build(k(), gen);
  for (int i = 0; i < 50; ++i) {
    Scalar s = RandomScalar();
    s.v[3] >>= 1;
    BnPtr sb = BnFromLimbs(s.v), tb(BN_new()), two_s(BN_new());
    BN_sub(tb.get(), BnFromLimbs(internal::kSm2N).get(), sb.get());
    Scalar t;
    LimbsFromBn(t.v, tb.get());
    for (const internal::Sm2CombTable* pt : {static_cast<const internal::Sm2CombTable*>(nullptr),
                                             &gtable->comb()}) {
      Sm2Jacobian got;
      k().mul_two_vartime(&got, g, s.v, gen, pt, t.v);
      EXPECT_EQ(AffineHex(got), "inf");
      k().mul_two_vartime(&got, g, s.v, gen, pt, s.v);
      BN_lshift1(two_s.get(), sb.get());
      ASSERT_EQ(EC_POINT_mul(group_.get(), want.get(), two_s.get(), nullptr, nullptr, ctx_.get()),
                1);
      EXPECT_EQ(AffineHex(got), Theirs(want.get()));
    }
  }
}

// e, r, s, d as BIGNUMs for the OpenSSL-side signature arithmetic (GB/T 32918.2 §6.1, §7.1).
class SigMath {
 public:
  SigMath(const EC_GROUP* group, BN_CTX* ctx) : group_(group), ctx_(ctx) {
    n_ = BnFromLimbs(internal::kSm2N);
  }
  // Verify: R = (e + x(s·G + (r + s)·P)) mod n == r.
  bool Verify(const std::string& pub, const std::string& e, const std::string& sig) {
    PointPtr p(EC_POINT_new(group_)), sum(EC_POINT_new(group_));
    if (EC_POINT_oct2point(group_, p.get(), BytePtr(pub.data()), pub.size(), ctx_) != 1) {
      return false;
    }
    BnPtr r = Bn(sig.substr(0, 32)), s = Bn(sig.substr(32)), t(BN_new()), x(BN_new()),
          eb = Bn(e), rr(BN_new());
    BN_mod_add(t.get(), r.get(), s.get(), n_.get(), ctx_);
    EC_POINT_mul(group_, sum.get(), s.get(), p.get(), t.get(), ctx_);
    if (EC_POINT_is_at_infinity(group_, sum.get())) return false;
    EC_POINT_get_affine_coordinates(group_, sum.get(), x.get(), nullptr, ctx_);
    BN_mod_add(rr.get(), eb.get(), x.get(), n_.get(), ctx_);
    return BN_cmp(rr.get(), r.get()) == 0;
  }
  // Sign with a random k: r = (e + x(k·G)) mod n, s = (1 + d)⁻¹·(k − r·d) mod n.
  std::string Sign(const std::string& d, const std::string& e) {
    for (;;) {
      BnPtr k(BN_new()), x(BN_new()), r(BN_new()), s(BN_new()), t(BN_new()), inv(BN_new());
      BN_rand_range(k.get(), n_.get());
      if (BN_is_zero(k.get())) continue;
      PointPtr kg(EC_POINT_new(group_));
      EC_POINT_mul(group_, kg.get(), k.get(), nullptr, nullptr, ctx_);
      EC_POINT_get_affine_coordinates(group_, kg.get(), x.get(), nullptr, ctx_);
      BnPtr eb = Bn(e), db = Bn(d);
      BN_mod_add(r.get(), eb.get(), x.get(), n_.get(), ctx_);
      BN_mod_add(t.get(), r.get(), k.get(), n_.get(), ctx_);
      if (BN_is_zero(r.get()) || BN_is_zero(t.get())) continue;
      BN_mod_mul(t.get(), r.get(), db.get(), n_.get(), ctx_);
      BN_mod_sub(s.get(), k.get(), t.get(), n_.get(), ctx_);
      BN_add_word(db.get(), 1);
      BN_mod_inverse(inv.get(), db.get(), n_.get(), ctx_);
      BN_mod_mul(s.get(), s.get(), inv.get(), n_.get(), ctx_);
      if (BN_is_zero(s.get())) continue;
      return BnTo32(r.get()) + BnTo32(s.get());
    }
  }

 private:
  static BnPtr Bn(const std::string& be) {
    return BnPtr(BN_bin2bn(BytePtr(be.data()), static_cast<int>(be.size()), nullptr));
  }
  const EC_GROUP* group_;
  BN_CTX* ctx_;
  BnPtr n_;
};

TEST_P(Sm2BackendsTest, SignVerifyEncryptInteroperateWithOpenSslMath) {
  SigMath math(group_.get(), ctx_.get());
  for (int i = 0; i < 60; ++i) {
    SCOPED_TRACE(::testing::Message() << "iteration " << i);
    ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
    const std::string pub = key.public_key().ToPoint();
    SecretData ds = key.ToScalar();
    const std::string d(ds.begin(), ds.end());
    // d·G agrees with OpenSSL.
    {
      PointPtr q(EC_POINT_new(group_.get()));
      BnPtr db(BN_bin2bn(BytePtr(d.data()), 32, nullptr));
      ASSERT_EQ(EC_POINT_mul(group_.get(), q.get(), db.get(), nullptr, nullptr, ctx_.get()), 1);
      ASSERT_EQ("04" + Theirs(q.get()), BytesToHex(pub));
    }
    Sm2PublicKeyCache cache(key.public_key());
    for (int j = 0; j < 12; ++j) {  // crosses Sm2PublicKeyCache::kBuildAfterUses
      const std::string e = RandomBytes(rng_, 32);
      // Ours → OpenSSL arithmetic.
      ASSERT_OK_AND_ASSIGN(std::string sig, Sm2SignDigest(key, e));
      ASSERT_TRUE(math.Verify(pub, e, sig));
      EXPECT_OK(Sm2VerifyDigest(key.public_key(), e, sig));
      EXPECT_OK(Sm2VerifyDigestCached(cache, e, sig));
      // OpenSSL arithmetic → ours, and tampering.
      const std::string theirs = math.Sign(d, e);
      EXPECT_OK(Sm2VerifyDigest(key.public_key(), e, theirs));
      EXPECT_OK(Sm2VerifyDigestCached(cache, e, theirs));
      std::string flipped = theirs;
      flipped[rng_() % 64] ^= static_cast<char>(1u << (rng_() % 8));
      EXPECT_THAT(Sm2VerifyDigestCached(cache, e, flipped),
                  StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
      std::string e2 = e;
      e2[0] ^= 1;
      EXPECT_THAT(Sm2VerifyDigest(key.public_key(), e2, theirs),
                  StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
      // Encryption through the cache (comb over the key's table after a few uses) and
      // without; decryption with the private key.
      const std::string msg = RandomBytes(rng_, rng_() % 100);
      ASSERT_OK_AND_ASSIGN(std::string c1, Sm2EncryptCached(cache, msg));
      ASSERT_OK_AND_ASSIGN(std::string c2, Sm2Encrypt(key.public_key(), msg));
      ASSERT_OK_AND_ASSIGN(std::string p1, Sm2Decrypt(key, c1));
      ASSERT_OK_AND_ASSIGN(std::string p2, Sm2Decrypt(key, c2));
      EXPECT_EQ(p1, msg);
      EXPECT_EQ(p2, msg);
    }
  }
}

TEST_P(Sm2BackendsTest, VerifyAcceptsX1AtOrAboveN) {
  // Verification compares X with c·Z² and (c + n)·Z² (c = (r − e) mod n) instead of
  // inverting Z. The second candidate matters only when x1' ≥ n (probability ~2^-32 for a
  // random signature), so build such a case: a point R with x_R ≥ n, random r and s,
  // P = (r + s)⁻¹·(R − s·G), and e = (r − x_R) mod n; then s·G + (r + s)·P = R.
  BnPtr n = BnFromLimbs(internal::kSm2N), x(BN_dup(n.get()));
  PointPtr rp(EC_POINT_new(group_.get()));
  int found = 0;
  for (int tries = 0; found < 4 && tries < 64; ++tries) {
    BN_add_word(x.get(), 1);
    ERR_set_mark();
    const int ok =
        EC_POINT_set_compressed_coordinates(group_.get(), rp.get(), x.get(), tries & 1, ctx_.get());
    ERR_pop_to_mark();
    if (ok != 1) continue;
    ++found;
    BnPtr r(BN_new()), s(BN_new()), t(BN_new()), tinv(BN_new()), e(BN_new()), neg_s(BN_new());
    BN_rand_range(r.get(), n.get());
    BN_rand_range(s.get(), n.get());
    BN_mod_add(t.get(), r.get(), s.get(), n.get(), ctx_.get());
    ASSERT_NE(BN_mod_inverse(tinv.get(), t.get(), n.get(), ctx_.get()), nullptr);
    // P = t⁻¹·R − t⁻¹·s·G.
    BN_mod_mul(neg_s.get(), tinv.get(), s.get(), n.get(), ctx_.get());
    BN_mod_sub(neg_s.get(), n.get(), neg_s.get(), n.get(), ctx_.get());
    PointPtr p(EC_POINT_new(group_.get()));
    ASSERT_EQ(EC_POINT_mul(group_.get(), p.get(), neg_s.get(), rp.get(), tinv.get(), ctx_.get()), 1);
    BN_mod_sub(e.get(), r.get(), x.get(), n.get(), ctx_.get());
    uint8_t pub[65];
    ASSERT_EQ(EC_POINT_point2oct(group_.get(), p.get(), POINT_CONVERSION_UNCOMPRESSED, pub, 65,
                                 ctx_.get()),
              65u);
    ASSERT_OK_AND_ASSIGN(Sm2PublicKey key,
                         Sm2PublicKey::FromPoint(std::string(reinterpret_cast<char*>(pub), 65)));
    const std::string sig = BnTo32(r.get()) + BnTo32(s.get());
    EXPECT_OK(Sm2VerifyDigest(key, BnTo32(e.get()), sig));
    Sm2PublicKeyCache cache(key);
    for (uint32_t u = 0; u < Sm2PublicKeyCache::kBuildAfterUses + 1; ++u) {
      EXPECT_OK(Sm2VerifyDigestCached(cache, BnTo32(e.get()), sig));
    }
    // e + 1 shifts the target by one: rejected.
    BN_add_word(e.get(), 1);
    BN_nnmod(e.get(), e.get(), n.get(), ctx_.get());
    EXPECT_THAT(Sm2VerifyDigest(key, BnTo32(e.get()), sig),
                StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
  }
  EXPECT_EQ(found, 4);
}

TEST_P(Sm2BackendsTest, StandardExamples) {
  // GB/T 32918.5 signature and encryption examples (fixed k) on this back end.
  std::map<std::string, std::string> ex;
  for (absl::string_view line :
       absl::StrSplit(ReadTestData("sm2_gbt32918_5_examples.txt"), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits(" = ", 1));
    absl::string_view v = kv.second;
    if (absl::ConsumePrefix(&v, "\"") && absl::ConsumeSuffix(&v, "\"")) {
      ex[kv.first] = std::string(v);
    } else {
      ex[kv.first] = HexToBytes(v);
    }
  }
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::FromScalar(ex["sign.d"]));
  ASSERT_OK_AND_ASSIGN(std::string sig,
                       Sm2SignDigestWithKForTesting(key, ex["sign.e"], ex["sign.k"]));
  EXPECT_EQ(BytesToHex(sig), BytesToHex(ex["sign.r"] + ex["sign.s"]));
  EXPECT_OK(Sm2VerifyDigest(key.public_key(), ex["sign.e"], sig));
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey ekey, Sm2PrivateKey::FromScalar(ex["enc.d"]));
  const std::string want = ex["enc.C1"] + ex["enc.C3"] + ex["enc.C2"];
  ASSERT_OK_AND_ASSIGN(std::string ct, Sm2EncryptWithKForTesting(ekey.public_key(),
                                                                 ex["enc.message"], ex["enc.k"]));
  EXPECT_EQ(BytesToHex(ct), BytesToHex(want));
  ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(ekey, want));
  EXPECT_EQ(pt, ex["enc.message"]);
}

INSTANTIATE_TEST_SUITE_P(Backends, Sm2BackendsTest, ::testing::ValuesIn(AllKernels()),
                         [](const ::testing::TestParamInfo<const Sm2Kernels*>& info) {
                           return std::string(info.param->name);
                         });

TEST(Sm2KernelOverride, OverrideIsUsedAndNameReportsDispatch) {
  const char* dispatched = internal::Sm2ActiveKernelName();
  internal::Sm2SetKernelsForTesting(&internal::kSm2KernelsGeneric);
  EXPECT_STREQ(internal::Sm2ActiveKernels().name, "generic");
  EXPECT_STREQ(internal::Sm2ActiveKernelName(), dispatched);
  internal::Sm2SetKernelsForTesting(nullptr);
  EXPECT_STREQ(internal::Sm2ActiveKernels().name, dispatched);
}

}  // namespace
}  // namespace smcrypt::testing
