// SM2 batches (sm2_batch.h): the 8-lane IFMA field operations against the generic back
// end on random and edge values; the 8-lane comb k·G and double-scalar s·G + t·P against
// the single-lane back ends; Sm2SignDigestBatchCore against Sm2SignDigestCore with the
// same nonces (identical signatures, checked with OpenSSL's EC arithmetic) and
// Sm2VerifyDigestBatch against Sm2VerifyDigestCore on valid, tampered and malformed
// signatures, at batch sizes around the lane count, with the IFMA path on and off. IFMA
// tests skip on CPUs without AVX-512 IFMA (or with it masked by SMCRYPT_CPU_DISABLE).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "crypto/common/bytes.h"
#include "crypto/core/sm2_primitives.h"
#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_key_cache.h"
#include "crypto/sm2/sm2_point.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm2.h"
#include "tests/crypto/sm2/sm2_openssl_util.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt::testing {
namespace {

using internal::kSm2IfmaLanes;
using internal::Sm2Affine;
using internal::Sm2Jacobian;

constexpr int L = kSm2IfmaLanes;

// OpenSslDecrypt: OpenSSL's SM2 decryption of a DER SM2Cipher.
absl::StatusOr<std::string> OpenSslDecrypt(EVP_PKEY* pkey, const std::string& der) {
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new(pkey, nullptr));
  size_t len = 0;
  const auto* in = reinterpret_cast<const uint8_t*>(der.data());
  if (EVP_PKEY_decrypt_init(ctx.get()) != 1 ||
      EVP_PKEY_decrypt(ctx.get(), nullptr, &len, in, der.size()) != 1) {
    ERR_clear_error();
    return absl::InternalError("OpenSSL SM2 decryption: size query failed");
  }
  std::string out(len, '\0');
  if (EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<uint8_t*>(out.data()), &len, in,
                       der.size()) != 1) {
    ERR_clear_error();
    return absl::InternalError("OpenSSL SM2 decryption failed");
  }
  out.resize(len);
  return out;
}

// Affine hex of a Jacobian point through the generic back end ("inf" for infinity).
std::string AffineHex(const Sm2Jacobian& j) {
  const internal::Sm2Kernels& g = internal::kSm2KernelsGeneric;
  Sm2Affine a;
  if (internal::PointToAffine(g, &a, j)) return "inf";
  uint8_t buf[64];
  internal::FeToBytes(g, buf, a.x);
  internal::FeToBytes(g, buf + 32, a.y);
  return BytesToHex(std::string(reinterpret_cast<char*>(buf), 64));
}

// a mod p for any a < 2^256 (< 2p).
void ModP(uint64_t r[4], const uint64_t a[4]) {
  uint64_t d[4];
  unsigned __int128 borrow = 0;
  for (int j = 0; j < 4; ++j) {
    const unsigned __int128 t = static_cast<unsigned __int128>(a[j]) - internal::kSm2P[j] - borrow;
    d[j] = static_cast<uint64_t>(t);
    borrow = (t >> 64) & 1;
  }
  for (int j = 0; j < 4; ++j) r[j] = borrow ? a[j] : d[j];
}

// Skips the calling test on CPUs without the IFMA kernels (or with them masked).
#define SMCRYPT_REQUIRE_IFMA()                                                          \
  if (!internal::Sm2IfmaSupported()) {                                                  \
    GTEST_SKIP() << "no AVX-512 IFMA on this CPU (or masked by SMCRYPT_CPU_DISABLE)"; \
  }

class Sm2BatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::cout << "SMCRYPT_TEST_SEED=" << TestSeed() << "\n";
    rng_.seed(TestSeed());
    group_ = Sm2Group();
    ctx_.reset(BN_CTX_new());
    n_ = BnFromLimbs(internal::kSm2N);
  }
  void TearDown() override { internal::Sm2SetBatchIfmaForTesting(true); }


  // OpenSSL EC arithmetic: R = (e + x(s·G + (r + s)·P)) mod n == r.
  bool OpenSslVerify(const std::string& pub, const std::string& e, const std::string& sig) {
    PointPtr p(EC_POINT_new(group_.get())), sum(EC_POINT_new(group_.get()));
    if (EC_POINT_oct2point(group_.get(), p.get(), BytePtr(pub.data()), pub.size(), ctx_.get()) !=
        1) {
      return false;
    }
    auto bn = [](const std::string& b) {
      return BnPtr(BN_bin2bn(BytePtr(b.data()), static_cast<int>(b.size()), nullptr));
    };
    BnPtr r = bn(sig.substr(0, 32)), s = bn(sig.substr(32)), t(BN_new()), x(BN_new()),
          eb = bn(e), rr(BN_new());
    BN_mod_add(t.get(), r.get(), s.get(), n_.get(), ctx_.get());
    EC_POINT_mul(group_.get(), sum.get(), s.get(), p.get(), t.get(), ctx_.get());
    if (EC_POINT_is_at_infinity(group_.get(), sum.get())) return false;
    EC_POINT_get_affine_coordinates(group_.get(), sum.get(), x.get(), nullptr, ctx_.get());
    BN_mod_add(rr.get(), eb.get(), x.get(), n_.get(), ctx_.get());
    return BN_cmp(rr.get(), r.get()) == 0;
  }

  void RandomLimbs(uint64_t a[4]) {
    for (int j = 0; j < 4; ++j) a[j] = rng_();
  }
  void RandomScalarBelowN(uint64_t a[4]) {
    do {
      RandomLimbs(a);
    } while (!internal::LtN(a) || internal::ScIsZero(a));
  }

  std::mt19937_64 rng_;
  GroupPtr group_;
  BnCtxPtr ctx_;
  BnPtr n_;
};

TEST_F(Sm2BatchTest, IfmaFieldOpsMatchGeneric) {
  SMCRYPT_REQUIRE_IFMA();
  const internal::Sm2Kernels& g = internal::kSm2KernelsGeneric;
  const uint64_t* p = internal::kSm2P;
  // Edge values: 0, 1, 2, p − 1, p, p + 1, 2^256 − 1, 2^255, 2^224, R mod p, p − 2^k.
  std::vector<std::array<uint64_t, 4>> edges = {
      {0, 0, 0, 0},
      {1, 0, 0, 0},
      {2, 0, 0, 0},
      {p[0] - 1, p[1], p[2], p[3]},
      {p[0], p[1], p[2], p[3]},
      {0, p[1] + 1, p[2], p[3]},  // p + 1 (p[0] = 2^64 − 1)
      {~0ull, ~0ull, ~0ull, ~0ull},
      {0, 0, 0, 1ull << 63},
      {0, 0, 0, 1ull << 32},
      {1, 0x00000000FFFFFFFFull, 0, 0x0000000100000000ull},
      {p[0], p[1], p[2] - 1, p[3]},
      {0xFFFFFFFFFFFFFull, 0, 0, 0},  // 2^52 − 1: limb boundary
      {0, 0x10000000000000ull >> 12, 0, 0},
  };
  int checked = 0;
  const int kRounds = 1400;  // 1400 × 8 lanes = 11,200 random inputs per operation
  for (int round = 0; round < kRounds + static_cast<int>(edges.size() * edges.size()) / L + 1;
       ++round) {
    uint64_t a[L][4], b[L][4];
    for (int l = 0; l < L; ++l) {
      if (round < kRounds) {
        RandomLimbs(a[l]);
        RandomLimbs(b[l]);
        // Every 4th lane: a value in [p, 2^256).
        if (l % 4 == 3) {
          a[l][1] |= 0xFFFFFFFF00000000ull;
          a[l][2] = ~0ull;
          a[l][3] = ~0ull;
        }
      } else {
        const size_t idx = static_cast<size_t>(round - kRounds) * L + l;
        const auto& ea = edges[(idx / edges.size()) % edges.size()];
        const auto& eb = edges[idx % edges.size()];
        std::memcpy(a[l], ea.data(), 32);
        std::memcpy(b[l], eb.data(), 32);
      }
    }
    for (int op = 0; op < 4; ++op) {
      uint64_t r[L][4];
      internal::Sm2IfmaFieldOpForTesting(op, r, a, b);
      for (int l = 0; l < L; ++l) {
        uint64_t ar[4], br[4], want[4];
        ModP(ar, a[l]);
        ModP(br, b[l]);
        switch (op) {
          case 0: g.fe_mul(want, ar, br); break;
          case 1: g.fe_sqr(want, ar); break;
          case 2: internal::FeAdd(want, ar, br); break;
          default: internal::FeSub(want, ar, br); break;
        }
        ASSERT_EQ(0, std::memcmp(want, r[l], 32))
            << "op " << op << " round " << round << " lane " << l;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 4 * 10000);
}

TEST_F(Sm2BatchTest, IfmaCombMatchesGeneric) {
  SMCRYPT_REQUIRE_IFMA();
  const internal::Sm2Kernels& g = internal::kSm2KernelsGeneric;
  std::vector<std::array<uint64_t, 4>> scalars;
  BnPtr nb = BnFromLimbs(internal::kSm2N);
  for (uint64_t v : {1, 2, 3, 63, 64, 65, 127, 128, 129}) scalars.push_back({v, 0, 0, 0});
  for (int d = 1; d <= 16; ++d) {  // n − d
    BnPtr b(BN_dup(nb.get()));
    BN_sub_word(b.get(), d);
    std::array<uint64_t, 4> s;
    LimbsFromBn(s.data(), b.get());
    scalars.push_back(s);
  }
  for (int bit = 0; bit < 256; ++bit) {
    std::array<uint64_t, 4> s{};
    s[bit / 64] = uint64_t{1} << (bit % 64);
    if (internal::LtN(s.data())) scalars.push_back(s);
  }
  scalars.push_back({0, 0, 0, 0xF800000000000000ull});  // top comb digit 16
  scalars.push_back({0, 0, 0, 0});                      // 0·G = infinity
  for (int i = 0; i < 400; ++i) {
    std::array<uint64_t, 4> s;
    RandomScalarBelowN(s.data());
    scalars.push_back(s);
  }
  for (size_t base = 0; base < scalars.size(); base += L) {
    uint64_t k[L][4] = {};
    for (int l = 0; l < L && base + l < scalars.size(); ++l) {
      std::memcpy(k[l], scalars[base + l].data(), 32);
    }
    Sm2Jacobian r[L];
    internal::Sm2IfmaMulBase8(r, k);
    for (int l = 0; l < L; ++l) {
      Sm2Jacobian want;
      internal::ScalarMulBase(g, &want, k[l]);
      ASSERT_EQ(AffineHex(r[l]), AffineHex(want)) << "scalar index " << base + l;
    }
  }
}

TEST_F(Sm2BatchTest, IfmaPointTableCombMatchesGeneric) {
  SMCRYPT_REQUIRE_IFMA();
  const internal::Sm2Kernels& g = internal::kSm2KernelsGeneric;
  BnPtr nb = BnFromLimbs(internal::kSm2N);
  for (int key = 0; key < 3; ++key) {
    ASSERT_OK_AND_ASSIGN(Sm2PrivateKey priv, Sm2PrivateKey::Generate());
    Sm2Affine p;
    internal::Sm2PublicKeyToAffine(g, priv.public_key(), &p);
    std::unique_ptr<internal::Sm2PointTable> table =
        internal::Sm2PointTable::Build(internal::Sm2ActiveKernels(), p);
    ASSERT_NE(table->points52(), nullptr);
    std::vector<std::array<uint64_t, 4>> scalars;
    for (uint64_t v : {1, 2, 3, 15, 16, 17, 31, 32, 33}) scalars.push_back({v, 0, 0, 0});
    for (int d = 1; d <= 16; ++d) {  // n − d
      BnPtr b(BN_dup(nb.get()));
      BN_sub_word(b.get(), d);
      std::array<uint64_t, 4> sc;
      LimbsFromBn(sc.data(), b.get());
      scalars.push_back(sc);
    }
    for (int bit = 0; bit < 256; ++bit) {
      std::array<uint64_t, 4> sc{};
      sc[bit / 64] = uint64_t{1} << (bit % 64);
      if (internal::LtN(sc.data())) scalars.push_back(sc);
    }
    // Last 5-bit window (bits 255..259) with digit 1 and the Booth carry into it.
    scalars.push_back({~0ull, ~0ull, ~0ull, 0x7FFFFFFFFFFFFFFFull});
    scalars.push_back({0, 0, 0, 0xC000000000000000ull});
    scalars.push_back({0, 0, 0, 0});  // 0·P = infinity
    for (int i = 0; i < 400; ++i) {
      std::array<uint64_t, 4> sc;
      RandomScalarBelowN(sc.data());
      scalars.push_back(sc);
    }
    for (size_t base = 0; base < scalars.size(); base += L) {
      uint64_t k[L][4] = {};
      for (int l = 0; l < L && base + l < scalars.size(); ++l) {
        std::memcpy(k[l], scalars[base + l].data(), 32);
      }
      Sm2Jacobian r[L];
      internal::Sm2IfmaMulPointTable8(r, k, table->points52());
      for (int l = 0; l < L; ++l) {
        Sm2Jacobian want;
        internal::ScalarMulPoint(g, &want, p, k[l]);
        ASSERT_EQ(AffineHex(r[l]), AffineHex(want)) << "key " << key << " scalar " << base + l;
      }
    }
  }
}

// Draws random nonces in [1, n − 1] (n − 1 itself at call MaxNonceAt) and records them.
class RecordingNonces {
 public:
  explicit RecordingNonces(uint64_t seed) : rng_(seed) {}
  absl::Status Next(uint64_t k[4]) {
    std::array<uint64_t, 4> v;
    do {
      for (int j = 0; j < 4; ++j) v[j] = rng_();
    } while (!internal::LtN(v.data()) || internal::ScIsZero(v.data()));
    if (calls_++ == max_nonce_at_) {  // n − 1, the largest nonce
      std::memcpy(v.data(), internal::kSm2N, 32);
      v[0] -= 1;
    }
    std::memcpy(k, v.data(), 32);
    drawn_.push_back(v);
    return absl::OkStatus();
  }
  const std::vector<std::array<uint64_t, 4>>& drawn() const { return drawn_; }
  void MaxNonceAt(int call) { max_nonce_at_ = call; }

 private:
  std::mt19937_64 rng_;
  int calls_ = 0;
  int max_nonce_at_ = -1;
  std::vector<std::array<uint64_t, 4>> drawn_;
};

TEST_F(Sm2BatchTest, EphemeralDhBatchMatchesGenericSingleOperations) {
  const internal::Sm2Kernels& g = internal::kSm2KernelsGeneric;
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey priv, Sm2PrivateKey::Generate());
  Sm2Affine p;
  internal::Sm2PublicKeyToAffine(g, priv.public_key(), &p);
  Sm2PublicKeyCache warm(priv.public_key());
  for (uint32_t i = 0; i < Sm2PublicKeyCache::kBuildAfterUses; ++i) warm.Table();
  ASSERT_NE(warm.Table(), nullptr);
  for (bool ifma : {true, false}) {
    internal::Sm2SetBatchIfmaForTesting(ifma);
    for (bool with_table : {false, true}) {
      for (size_t count : {0, 1, 3, 4, 5, 7, 8, 9, 12, 17, 64}) {
        SCOPED_TRACE(::testing::Message() << "ifma " << ifma << " table " << with_table
                                          << " count " << count);
        // A fresh cache has no table: one call is one use of the key.
        Sm2PublicKeyCache fresh(priv.public_key());
        const Sm2PublicKeyCache& cache = with_table ? warm : fresh;
        RecordingNonces nonces(rng_());
        nonces.MaxNonceAt(static_cast<int>(count / 2));
        std::vector<internal::Sm2EphemeralDh> out(count);
        ASSERT_OK(internal::Sm2EphemeralDhBatchCore(
            cache, [&](uint64_t k[4]) { return nonces.Next(k); }, absl::MakeSpan(out)));
        ASSERT_EQ(nonces.drawn().size(), count);
        for (size_t i = 0; i < count; ++i) {
          Sm2Jacobian kg, kp;
          internal::ScalarMulBase(g, &kg, nonces.drawn()[i].data());
          internal::ScalarMulPoint(g, &kp, p, nonces.drawn()[i].data());
          ASSERT_EQ(out[i].c1[0], 0x04);
          EXPECT_EQ(BytesToHex(std::string(reinterpret_cast<char*>(out[i].c1 + 1), 64)),
                    AffineHex(kg))
              << "item " << i;
          EXPECT_EQ(BytesToHex(std::string(reinterpret_cast<char*>(out[i].shared), 64)),
                    AffineHex(kp))
              << "item " << i;
        }
      }
    }
  }
  // k·P against OpenSSL for one batch on the default path.
  internal::Sm2SetBatchIfmaForTesting(true);
  std::vector<internal::Sm2EphemeralDh> out(9);
  RecordingNonces nonces(rng_());
  ASSERT_OK(internal::Sm2EphemeralDhBatchCore(
      warm, [&](uint64_t k[4]) { return nonces.Next(k); }, absl::MakeSpan(out)));
  const std::string pub = priv.public_key().ToPoint();
  for (size_t i = 0; i < out.size(); ++i) {
    PointPtr pt(EC_POINT_new(group_.get())), r(EC_POINT_new(group_.get()));
    ASSERT_EQ(EC_POINT_oct2point(group_.get(), pt.get(), BytePtr(pub.data()), pub.size(),
                                 ctx_.get()),
              1);
    BnPtr k = BnFromLimbs(nonces.drawn()[i].data());
    ASSERT_EQ(EC_POINT_mul(group_.get(), r.get(), nullptr, pt.get(), k.get(), ctx_.get()), 1);
    uint8_t buf[65];
    ASSERT_EQ(EC_POINT_point2oct(group_.get(), r.get(), POINT_CONVERSION_UNCOMPRESSED, buf, 65,
                                 ctx_.get()),
              65u);
    EXPECT_EQ(std::memcmp(buf + 1, out[i].shared, 64), 0) << "item " << i;
  }
}

TEST_F(Sm2BatchTest, EphemeralDhBatchErrors) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey priv, Sm2PrivateKey::Generate());
  Sm2PublicKeyCache cache(priv.public_key());
  std::vector<internal::Sm2EphemeralDh> out(10);
  int calls = 0;
  EXPECT_THAT(internal::Sm2EphemeralDhBatchCore(
                  cache,
                  [&](uint64_t k[4]) -> absl::Status {
                    if (++calls == 4) return absl::InternalError("no randomness");
                    k[0] = 7;
                    k[1] = k[2] = k[3] = 0;
                    return absl::OkStatus();
                  },
                  absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kInternal));
  for (const uint64_t top : {uint64_t{0}, ~uint64_t{0}}) {  // k = 0 and k ≥ n
    EXPECT_THAT(internal::Sm2EphemeralDhBatchCore(
                    cache,
                    [&](uint64_t k[4]) -> absl::Status {
                      k[0] = k[1] = k[2] = k[3] = top;
                      return absl::OkStatus();
                    },
                    absl::MakeSpan(out)),
                StatusIs(absl::StatusCode::kInvalidArgument, "SM2 nonce k out of range [1, n-1]"));
  }
  // Fresh CSPRNG scalars: distinct C1 values.
  ASSERT_OK(internal::Sm2EphemeralDhBatch(cache, absl::MakeSpan(out)));
  for (size_t i = 1; i < out.size(); ++i) {
    EXPECT_NE(std::memcmp(out[0].c1, out[i].c1, sizeof(out[0].c1)), 0);
  }
}

TEST_F(Sm2BatchTest, IfmaDoubleScalarMatchesGenericAndFlagsExceptions) {
  SMCRYPT_REQUIRE_IFMA();
  const internal::Sm2Kernels& g = internal::kSm2KernelsGeneric;
  // Keys with tables; key 0 is d = 1 (P = G), where s = t = 128 makes the second pass add
  // 128·G to 128·G (a doubling the lanes flag), and s = 128, t = n − 128 meets −128·G.
  std::vector<Sm2PrivateKey> keys;
  std::string one(32, '\0');
  one[31] = 1;
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey k1, Sm2PrivateKey::FromScalar(one));
  keys.push_back(std::move(k1));
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(Sm2PrivateKey k, Sm2PrivateKey::Generate());
    keys.push_back(std::move(k));
  }
  std::vector<Sm2Affine> pts(keys.size());
  std::vector<std::unique_ptr<internal::Sm2PointTable>> tables;
  for (size_t i = 0; i < keys.size(); ++i) {
    internal::Sm2PublicKeyToAffine(g, keys[i].public_key(), &pts[i]);
    tables.push_back(internal::Sm2PointTable::Build(g, pts[i]));
    ASSERT_NE(tables.back()->points52(), nullptr);
  }
  for (int round = 0; round < 60; ++round) {
    uint64_t s[L][4], t[L][4];
    const uint64_t* tp[L];
    int key_of[L];
    for (int l = 0; l < L; ++l) {
      key_of[l] = static_cast<int>(rng_() % keys.size());
      tp[l] = tables[key_of[l]]->points52();
      RandomLimbs(s[l]);
      RandomLimbs(t[l]);
      if (round % 7 == 0) s[l][0] = s[l][1] = 0;  // sparse digits
    }
    if (round == 0) {
      key_of[0] = key_of[1] = 0;
      tp[0] = tp[1] = tables[0]->points52();
      const uint64_t s128[4] = {128, 0, 0, 0};
      std::memcpy(s[0], s128, 32);
      std::memcpy(t[0], s128, 32);
      std::memcpy(s[1], s128, 32);
      BnPtr b(BN_dup(n_.get()));
      BN_sub_word(b.get(), 128);
      LimbsFromBn(t[1], b.get());
      tp[2] = nullptr;  // s·G only
    }
    Sm2Jacobian r[L];
    uint8_t exc[L];
    internal::Sm2IfmaMulTwo8Vt(r, s, tp, t, exc);
    for (int l = 0; l < L; ++l) {
      if (round == 0 && l < 2) {
        EXPECT_EQ(exc[l], 1) << "lane " << l;
        continue;
      }
      ASSERT_EQ(exc[l], 0) << "round " << round << " lane " << l;
      Sm2Jacobian want;
      if (tp[l] == nullptr) {
        internal::ScalarMulBase(g, &want, s[l]);
      } else {
        internal::ScalarMulTwoVartime(g, &want, s[l], pts[key_of[l]], t[l], nullptr);
      }
      ASSERT_EQ(AffineHex(r[l]), AffineHex(want)) << "round " << round << " lane " << l;
    }
  }
}

// The lanes without comb tables (t·P with doublings in the lanes): random points and
// scalars against the generic back end, sparse scalars, and the exceptional lanes: P = G
// with s = t = 128 (the comb pass doubles), s = 128 with t = n − 128 (the comb pass meets
// −128·G), and t = n − 6 (the last window adds −3P to −3P).
TEST_F(Sm2BatchTest, IfmaDoubleScalarWithoutTablesMatchesGeneric) {
  SMCRYPT_REQUIRE_IFMA();
  const internal::Sm2Kernels& g = internal::kSm2KernelsGeneric;
  for (int round = 0; round < 60; ++round) {
    uint64_t s[L][4], t[L][4];
    Sm2Affine p[L];
    for (int l = 0; l < L; ++l) {
      uint64_t u[4];
      RandomScalarBelowN(u);
      Sm2Jacobian pj;
      internal::ScalarMulBase(g, &pj, u);
      ASSERT_FALSE(internal::PointToAffine(g, &p[l], pj));
      RandomLimbs(s[l]);
      RandomScalarBelowN(t[l]);
      if (round % 5 == 1) t[l][1] = t[l][2] = 0;  // sparse digits
      if (round % 5 == 2) s[l][3] = 0;
    }
    std::vector<int> want_exc;
    if (round == 0) {
      const uint64_t v128[4] = {128, 0, 0, 0}, v6[4] = {6, 0, 0, 0};
      p[0] = p[1] = internal::Sm2Generator();
      std::memcpy(s[0], v128, 32);
      std::memcpy(t[0], v128, 32);
      std::memcpy(s[1], v128, 32);
      internal::ScSub(t[1], internal::kSm2N, v128);
      internal::ScSub(t[2], internal::kSm2N, v6);
      want_exc = {0, 1, 2};
    }
    Sm2Jacobian r[L];
    uint8_t exc[L];
    internal::Sm2IfmaMulTwo8PointsVt(r, s, p, t, exc);
    for (int l = 0; l < L; ++l) {
      if (std::find(want_exc.begin(), want_exc.end(), l) != want_exc.end()) {
        EXPECT_EQ(exc[l], 1) << "lane " << l;
        continue;
      }
      ASSERT_EQ(exc[l], 0) << "round " << round << " lane " << l;
      Sm2Jacobian want;
      internal::ScalarMulTwoVartime(g, &want, s[l], p[l], t[l], nullptr);
      ASSERT_EQ(AffineHex(r[l]), AffineHex(want)) << "round " << round << " lane " << l;
    }
  }
}

// A nonce source that replays a fixed sequence (the same for the batch and the single path).
class ReplayNonces {
 public:
  explicit ReplayNonces(uint64_t seed) : rng_(seed) {}
  absl::Status Next(uint64_t k[4]) {
    if (zero_at_ == calls_++) {
      k[0] = k[1] = k[2] = k[3] = 0;
      return absl::OkStatus();
    }
    do {
      for (int j = 0; j < 4; ++j) k[j] = rng_();
    } while (!internal::LtN(k) || internal::ScIsZero(k));
    return absl::OkStatus();
  }
  void ZeroAt(int call) { zero_at_ = call; }

 private:
  std::mt19937_64 rng_;
  int calls_ = 0;
  int zero_at_ = -1;
};

TEST_F(Sm2BatchTest, SignBatchEqualsSingleAndVerifies) {
  std::vector<Sm2PrivateKey> keys;
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(Sm2PrivateKey k, Sm2PrivateKey::Generate());
    keys.push_back(std::move(k));
  }
  for (bool ifma : {true, false}) {
    internal::Sm2SetBatchIfmaForTesting(ifma);
    for (size_t n : {0, 1, 7, 8, 9, 64, 65}) {
      SCOPED_TRACE(::testing::Message() << "ifma " << ifma << " size " << n);
      std::vector<const Sm2PrivateKey*> kp;
      std::vector<std::string> digests;
      for (size_t i = 0; i < n; ++i) {
        kp.push_back(&keys[i % 3 == 0 ? 0 : rng_() % keys.size()]);  // repeated keys
        digests.push_back(RandomBytes(rng_, 32));
      }
      // Malformed digests mixed in (sizes 31 and 33) at sizes ≥ 9.
      if (n >= 9) {
        digests[3] = RandomBytes(rng_, 31);
        digests[n - 1] = RandomBytes(rng_, 33);
      }
      std::vector<absl::string_view> dv(digests.begin(), digests.end());
      const uint64_t seed = rng_();
      ReplayNonces batch_nonces(seed), single_nonces(seed);
      if (n >= 8) {
        // The 6th nonce drawn is 0: that item fails, the others do not move.
        batch_nonces.ZeroAt(5);
        single_nonces.ZeroAt(5);
      }
      std::vector<absl::StatusOr<std::string>> out(n);
      internal::Sm2SignDigestBatchCore(
          kp, dv, [&](uint64_t k[4]) { return batch_nonces.Next(k); }, absl::MakeSpan(out));
      for (size_t i = 0; i < n; ++i) {
        SCOPED_TRACE(::testing::Message() << "item " << i);
        absl::StatusOr<std::string> want = internal::Sm2SignDigestCore(
            *kp[i], dv[i], [&](uint64_t k[4]) { return single_nonces.Next(k); });
        ASSERT_EQ(out[i].status(), want.status());
        if (!want.ok()) continue;
        EXPECT_EQ(BytesToHex(*out[i]), BytesToHex(*want));
        EXPECT_TRUE(OpenSslVerify(kp[i]->public_key().ToPoint(), digests[i], *out[i]));
        EXPECT_OK(Sm2VerifyDigest(kp[i]->public_key(), digests[i], *out[i]));
      }
      if (n >= 9) {
        EXPECT_EQ(out[3].status().code(), absl::StatusCode::kInvalidArgument);
        EXPECT_EQ(out[n - 1].status().code(), absl::StatusCode::kInvalidArgument);
      }
    }
  }
}

TEST_F(Sm2BatchTest, SignBatchWithFreshNoncesVerifies) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
  std::vector<const Sm2PrivateKey*> kp(20, &key);
  std::vector<std::string> digests;
  for (int i = 0; i < 20; ++i) digests.push_back(RandomBytes(rng_, 32));
  std::vector<absl::string_view> dv(digests.begin(), digests.end());
  std::vector<absl::StatusOr<std::string>> out(20);
  internal::Sm2SignDigestBatch(kp, dv, absl::MakeSpan(out));
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK(out[i].status());
    EXPECT_TRUE(OpenSslVerify(key.public_key().ToPoint(), digests[i], *out[i]));
    for (int j = 0; j < i; ++j) EXPECT_NE(*out[i], *out[j]);
  }
}

TEST_F(Sm2BatchTest, VerifyBatchEqualsSingle) {
  std::vector<Sm2PrivateKey> keys;
  std::string one(32, '\0');
  one[31] = 1;
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey k1, Sm2PrivateKey::FromScalar(one));
  keys.push_back(std::move(k1));
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK_AND_ASSIGN(Sm2PrivateKey k, Sm2PrivateKey::Generate());
    keys.push_back(std::move(k));
  }
  std::vector<std::unique_ptr<Sm2PublicKeyCache>> caches;
  for (size_t i = 0; i < keys.size(); ++i) {
    caches.push_back(std::make_unique<Sm2PublicKeyCache>(keys[i].public_key()));
    // Keys 0–3 get their tables now; key 4 stays without one (single path) for a while.
    if (i < 4) {
      for (uint32_t u = 0; u < Sm2PublicKeyCache::kBuildAfterUses; ++u) caches[i]->Table();
    }
  }
  auto bytes32 = [](const uint64_t a[4]) {
    std::string b(32, '\0');
    internal::LimbsToBytes(BytePtr(&b[0]), a);
    return b;
  };
  std::string n_bytes = bytes32(internal::kSm2N);
  for (bool ifma : {true, false}) {
    internal::Sm2SetBatchIfmaForTesting(ifma);
    for (size_t n : {0, 1, 7, 8, 9, 64, 65}) {
      SCOPED_TRACE(::testing::Message() << "ifma " << ifma << " size " << n);
      // Key 4 starts every batch without a table (its lanes run t·P with doublings).
      caches[4] = std::make_unique<Sm2PublicKeyCache>(keys[4].public_key());
      std::vector<std::string> es, sigs;
      std::vector<int> key_of;
      for (size_t i = 0; i < n; ++i) {
        const int k = static_cast<int>(i % 4 == 1 ? 1 : rng_() % keys.size());
        key_of.push_back(k);
        es.push_back(RandomBytes(rng_, 32));
        ASSERT_OK_AND_ASSIGN(std::string sig, Sm2SignDigest(keys[k], es.back()));
        switch (i % 11) {
          case 2: sig[rng_() % 64] ^= static_cast<char>(1u << (rng_() % 8)); break;  // tampered
          case 4: es.back()[0] ^= 1; break;                                          // wrong e
          case 5: std::memset(&sig[0], 0, 32); break;                                // r = 0
          case 6: std::memset(&sig[32], 0, 32); break;                               // s = 0
          case 7: sig.replace(0, 32, n_bytes); break;                                // r = n
          case 8: sig.replace(32, 32, std::string(32, '\xff')); break;               // s ≥ n
          case 9: sig.resize(63); break;                                             // size
          case 10: {  // r + s = n (t = 0)
            uint64_t r[4], s[4];
            internal::LimbsFromBytes(r, BytePtr(sig.data()));
            internal::ScSub(s, internal::kSm2N, r);
            sig.replace(32, 32, bytes32(s));
            break;
          }
          default: break;
        }
        sigs.push_back(sig);
      }
      if (n >= 9) {
        // P = G, s = 128, r = n − 256: t·P = −128·G meets +128·G (infinity; exceptional
        // lane, recomputed on the single path). And a 31-byte digest.
        key_of[0] = 0;
        uint64_t r[4] = {0, 0, 0, 0}, nm[4];
        const uint64_t v256[4] = {256, 0, 0, 0};
        internal::ScSub(nm, internal::kSm2N, v256);
        std::memcpy(r, nm, 32);
        const uint64_t s128[4] = {128, 0, 0, 0};
        sigs[0] = bytes32(r) + bytes32(s128);
        es[8] = es[8].substr(0, 31);
      }
      std::vector<internal::Sm2VerifyBatchItem> items;
      for (size_t i = 0; i < n; ++i) items.push_back({caches[key_of[i]].get(), es[i], sigs[i]});
      std::vector<absl::Status> out(n);
      internal::Sm2VerifyDigestBatch(items, absl::MakeSpan(out));
      for (size_t i = 0; i < n; ++i) {
        SCOPED_TRACE(::testing::Message() << "item " << i << " kind " << i % 11);
        const absl::Status want = internal::Sm2VerifyDigestCore(keys[key_of[i]].public_key(),
                                                                es[i], sigs[i], nullptr);
        EXPECT_EQ(out[i], want);
        if (i % 11 == 0 || i % 11 == 1 || i % 11 == 3) {
          if (!(n >= 9 && (i == 0 || i == 8))) {
            EXPECT_OK(out[i]);
          }
        }
        if (sigs[i].size() == 64 && es[i].size() == 32) {
          EXPECT_EQ(out[i].ok(),
                    OpenSslVerify(keys[key_of[i]].public_key().ToPoint(), es[i], sigs[i]));
        }
      }
    }
  }
}

// Sm2Sign::SignMany / Sm2Verify::VerifyMany (what smcryptd's SignBatch and VerifyBatch
// call): signers with different keys, user IDs, encodings and prehashing in one batch;
// every result equals what the single Sign/Verify gives (verification of the batch's
// signatures by the single verifiers; the same statuses for malformed items).
TEST_F(Sm2BatchTest, SignManyAndVerifyManyMatchSingleOperations) {
  struct Variant {
    std::string user_id;
    SignatureEncoding encoding;
    bool prehashed;
  };
  const std::vector<Variant> variants = {{std::string(kSm2DefaultUserId), SignatureEncoding::kDer, false},
                                         {"alice@example", SignatureEncoding::kRaw, false},
                                         {std::string(kSm2DefaultUserId), SignatureEncoding::kRaw, true},
                                         {"", SignatureEncoding::kDer, false}};
  std::vector<std::unique_ptr<PublicKeySign>> signers;
  std::vector<std::unique_ptr<PublicKeyVerify>> verifiers;
  for (int i = 0; i < 6; ++i) {
    ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
    const Variant& v = variants[i % variants.size()];
    SignatureOptions options;
    options.user_id = v.user_id;
    options.encoding = v.encoding;
    options.prehashed = v.prehashed;
    ASSERT_OK_AND_ASSIGN(auto verifier, Sm2Verify::New(key.public_key(), options));
    ASSERT_OK_AND_ASSIGN(auto signer, Sm2Sign::New(std::move(key), options));
    signers.push_back(std::move(signer));
    verifiers.push_back(std::move(verifier));
  }
  for (bool ifma : {true, false}) {
    internal::Sm2SetBatchIfmaForTesting(ifma);
    const size_t n = 40;
    std::vector<const Sm2Sign*> sp;
    std::vector<const Sm2Verify*> vp;
    std::vector<std::string> data;
    std::vector<size_t> which;
    for (size_t i = 0; i < n; ++i) {
      const size_t k = i % 5 == 0 ? 0 : rng_() % signers.size();
      which.push_back(k);
      sp.push_back(dynamic_cast<const Sm2Sign*>(signers[k].get()));
      vp.push_back(dynamic_cast<const Sm2Verify*>(verifiers[k].get()));
      const bool prehashed = variants[k % variants.size()].prehashed;
      // A prehashed item of 31 bytes is malformed (InvalidArgument from both paths).
      data.push_back(RandomBytes(rng_, prehashed ? (i == 7 ? 31 : 32) : rng_() % 200));
    }
    std::vector<absl::string_view> dv(data.begin(), data.end());
    std::vector<absl::StatusOr<std::string>> sigs(n);
    Sm2Sign::SignMany(sp, dv, absl::MakeSpan(sigs));
    std::vector<std::string> sig_bytes(n);
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(::testing::Message() << "ifma " << ifma << " item " << i);
      absl::StatusOr<std::string> single = signers[which[i]]->Sign(dv[i]);
      ASSERT_EQ(sigs[i].ok(), single.ok());
      if (!single.ok()) {
        EXPECT_EQ(sigs[i].status(), single.status());
        sig_bytes[i] = std::string(64, '\x01');
        continue;
      }
      EXPECT_OK(verifiers[which[i]]->Verify(*sigs[i], dv[i]));
      sig_bytes[i] = *sigs[i];
    }
    // Tamper with some, truncate one, then VerifyMany against the single Verify.
    sig_bytes[3][sig_bytes[3].size() / 2] ^= 0x10;
    sig_bytes[11].resize(sig_bytes[11].size() - 1);
    data[17] += "x";
    dv.assign(data.begin(), data.end());
    std::vector<absl::string_view> sv(sig_bytes.begin(), sig_bytes.end());
    std::vector<absl::Status> out(n);
    Sm2Verify::VerifyMany(vp, sv, dv, absl::MakeSpan(out));
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(::testing::Message() << "ifma " << ifma << " item " << i);
      EXPECT_EQ(out[i], verifiers[which[i]]->Verify(sv[i], dv[i]));
      if (i != 3 && i != 7 && i != 11 && i != 17) {
        EXPECT_OK(out[i]);
      }
    }
    EXPECT_FALSE(out[3].ok());
    EXPECT_FALSE(out[17].ok());
  }
}

// The primitive interfaces' batch calls (PublicKeySign::SignMany,
// PublicKeyVerify::VerifyMany) on SM2 objects: every result what the single call gives.
TEST_F(Sm2BatchTest, InterfaceSignManyAndVerifyManyMatchSingleOperations) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
  ASSERT_OK_AND_ASSIGN(auto verifier, Sm2Verify::New(key.public_key(), SignatureOptions{}));
  ASSERT_OK_AND_ASSIGN(auto signer, Sm2Sign::New(std::move(key), SignatureOptions{}));
  const PublicKeySign& s = *signer;
  const PublicKeyVerify& v = *verifier;
  for (bool ifma : {true, false}) {
    internal::Sm2SetBatchIfmaForTesting(ifma);
    for (size_t n : {0, 1, 2, 7, 8, 9, 17}) {
      SCOPED_TRACE(::testing::Message() << "ifma " << ifma << " n " << n);
      std::vector<std::string> data;
      for (size_t i = 0; i < n; ++i) data.push_back(RandomBytes(rng_, rng_() % 100));
      std::vector<absl::string_view> dv(data.begin(), data.end());
      std::vector<absl::StatusOr<std::string>> sigs = s.SignMany(dv);
      ASSERT_EQ(sigs.size(), n);
      std::vector<std::string> sig_bytes;
      for (size_t i = 0; i < n; ++i) {
        ASSERT_OK(sigs[i].status());
        sig_bytes.push_back(*sigs[i]);
      }
      if (n > 2) sig_bytes[1][sig_bytes[1].size() - 2] ^= 0x01;  // a wrong signature
      std::vector<VerifyInput> inputs;
      for (size_t i = 0; i < n; ++i) inputs.push_back({sig_bytes[i], dv[i]});
      std::vector<absl::Status> out = v.VerifyMany(inputs);
      ASSERT_EQ(out.size(), n);
      for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(out[i], v.Verify(sig_bytes[i], dv[i])) << i;
        if (n > 2 && i == 1) {
          EXPECT_FALSE(out[i].ok());
        } else {
          EXPECT_OK(out[i]);
        }
      }
    }
  }
}

// Sm2PublicKeyEncrypt::EncryptMany (Sm2EncryptManyCached): every ciphertext decrypts to
// its message with smcrypt and with OpenSSL (DER, non-empty messages), each has its own
// C1, in all three formats, with the IFMA lanes on and off, before and after the key's
// comb table exists (the kBuildAfterUses-th call builds it), at sizes around the lane
// count, empty messages included.
TEST_F(Sm2BatchTest, EncryptManyDecryptsWithSmcryptAndOpenSsl) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
  const SecretData d = key.ToScalar();
  PkeyPtr evp = Sm2EvpKey(key.public_key().ToPoint(),
                          std::string(SecretDataAsStringView(d)));
  for (Sm2CiphertextFormat format : {Sm2CiphertextFormat::kC1C3C2, Sm2CiphertextFormat::kC1C2C3,
                                     Sm2CiphertextFormat::kDer}) {
    Sm2PublicKeyEncrypt enc(key.public_key(), format);
    const PublicKeyEncrypt& pke = enc;
    for (int round = 0; round < 2 * static_cast<int>(Sm2PublicKeyCache::kBuildAfterUses); ++round) {
      const bool ifma = round % 2 == 0;
      internal::Sm2SetBatchIfmaForTesting(ifma);
      const size_t n = std::vector<size_t>{0, 1, 3, 7, 8, 9, 16, 17}[round % 8];
      SCOPED_TRACE(::testing::Message() << "format " << static_cast<int>(format) << " round "
                                        << round << " n " << n);
      std::vector<std::string> msgs;
      for (size_t i = 0; i < n; ++i) msgs.push_back(RandomBytes(rng_, i == 0 ? 0 : rng_() % 300));
      std::vector<absl::string_view> mv(msgs.begin(), msgs.end());
      std::vector<absl::StatusOr<std::string>> cts = pke.EncryptMany(mv);
      ASSERT_EQ(cts.size(), n);
      std::set<std::string> c1s;
      for (size_t i = 0; i < n; ++i) {
        ASSERT_OK(cts[i].status()) << i;
        absl::StatusOr<std::string> back = Sm2Decrypt(key, *cts[i], format);
        ASSERT_OK(back.status()) << i;
        EXPECT_EQ(*back, msgs[i]) << i;
        if (format == Sm2CiphertextFormat::kDer && !msgs[i].empty()) {
          absl::StatusOr<std::string> theirs = OpenSslDecrypt(evp.get(), *cts[i]);
          ASSERT_OK(theirs.status()) << i;
          EXPECT_EQ(*theirs, msgs[i]) << i;
        }
        if (format != Sm2CiphertextFormat::kDer) c1s.insert(cts[i]->substr(0, kSm2PointSize));
      }
      if (format != Sm2CiphertextFormat::kDer) {
        EXPECT_EQ(c1s.size(), n);  // a fresh k for each message
      }
    }
  }
}

// Distinct keys seen for the first time: no comb tables, so the lanes compute t·P with
// doublings (groups of 8, 8 and a last group of 5), valid and invalid signatures mixed.
TEST_F(Sm2BatchTest, VerifyBatchOfFreshKeysEqualsSingle) {
  const size_t n = 21;
  std::vector<Sm2PrivateKey> keys;
  std::vector<std::unique_ptr<Sm2PublicKeyCache>> caches;
  std::vector<std::string> es, sigs;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_OK_AND_ASSIGN(Sm2PrivateKey k, Sm2PrivateKey::Generate());
    caches.push_back(std::make_unique<Sm2PublicKeyCache>(k.public_key()));
    es.push_back(RandomBytes(rng_, 32));
    ASSERT_OK_AND_ASSIGN(std::string sig, Sm2SignDigest(k, es.back()));
    if (i % 4 == 3) sig[rng_() % 64] ^= static_cast<char>(1u << (rng_() % 8));
    if (i == 10) es.back()[31] ^= 0x80;
    sigs.push_back(sig);
    keys.push_back(std::move(k));
  }
  std::vector<internal::Sm2VerifyBatchItem> items;
  for (size_t i = 0; i < n; ++i) items.push_back({caches[i].get(), es[i], sigs[i]});
  std::vector<absl::Status> out(n);
  internal::Sm2VerifyDigestBatch(items, absl::MakeSpan(out));
  for (size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(::testing::Message() << "item " << i);
    EXPECT_EQ(out[i], internal::Sm2VerifyDigestCore(keys[i].public_key(), es[i], sigs[i], nullptr));
    EXPECT_EQ(out[i].ok(), i % 4 != 3 && i != 10);
    EXPECT_EQ(out[i].ok(), OpenSslVerify(keys[i].public_key().ToPoint(), es[i], sigs[i]));
  }
}

TEST(Sm2BatchMaskTest, IfmaFollowsTheFeatureMask) {
  const char* mask = std::getenv("SMCRYPT_CPU_DISABLE");
  const bool masked = mask != nullptr && (std::string(mask).find("ifma") != std::string::npos ||
                                          std::string(mask).find("avx512") != std::string::npos);
  const uint32_t need = kCpuAvx512 | kCpuIfma;
  const bool cpu_has = (DetectCpuFeatures() & need) == need;
  EXPECT_EQ(internal::Sm2IfmaSupported(), cpu_has && !masked);
  EXPECT_EQ(internal::Sm2BatchUsesIfma(), internal::Sm2IfmaSupported());
  internal::Sm2SetBatchIfmaForTesting(false);
  EXPECT_FALSE(internal::Sm2BatchUsesIfma());
  internal::Sm2SetBatchIfmaForTesting(true);
}

}  // namespace
}  // namespace smcrypt::testing
