// Algorithm names (docs/design.md, "Names used everywhere"): every enum value round-trips
// through its name, parsing ignores letter case, unknown names are InvalidArgument.
#include "smcrypt/algorithm.h"

#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::StatusIs;

constexpr int kNumAlgorithms = static_cast<int>(Algorithm::kSm4XtsGb) + 1;

TEST(AlgorithmTest, EveryValueRoundTripsThroughItsName) {
  std::set<std::string> names;
  for (int i = 0; i < kNumAlgorithms; ++i) {
    const Algorithm alg = static_cast<Algorithm>(i);
    const std::string name(AlgorithmName(alg));
    SCOPED_TRACE(name);
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << "duplicate name";
    auto parsed = ParseAlgorithm(name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, alg);
    auto lower = ParseAlgorithm(absl::AsciiStrToLower(name));
    ASSERT_TRUE(lower.ok()) << lower.status();
    EXPECT_EQ(*lower, alg);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumAlgorithms));
}

TEST(AlgorithmTest, CanonicalSpellings) {
  EXPECT_EQ(AlgorithmName(Algorithm::kSm3), "SM3");
  EXPECT_EQ(AlgorithmName(Algorithm::kSha256), "SHA-256");
  EXPECT_EQ(AlgorithmName(Algorithm::kHmacSm3), "HMAC-SM3");
  EXPECT_EQ(AlgorithmName(Algorithm::kHmacSha256), "HMAC-SHA-256");
  EXPECT_EQ(AlgorithmName(Algorithm::kSm4Gcm), "SM4-GCM");
  EXPECT_EQ(AlgorithmName(Algorithm::kSm4Ccm), "SM4-CCM");
  EXPECT_EQ(AlgorithmName(Algorithm::kAes128Cbc), "AES-128-CBC");
  EXPECT_EQ(AlgorithmName(Algorithm::kAes256Gcm), "AES-256-GCM");
  EXPECT_EQ(AlgorithmName(Algorithm::kSm2), "SM2");
  EXPECT_EQ(AlgorithmName(Algorithm::kEcdsaP256), "ECDSA-P256");
  EXPECT_EQ(AlgorithmName(Algorithm::kEcdsaSecp256k1), "ECDSA-SECP256K1");
  EXPECT_EQ(AlgorithmName(Algorithm::kRsa2048Pss), "RSA-2048-PSS");
  EXPECT_EQ(AlgorithmName(Algorithm::kRsa3072Oaep), "RSA-3072-OAEP");
  EXPECT_EQ(AlgorithmName(Algorithm::kHpkeSm2Sm3Sm4Gcm), "HPKE-SM2-SM3-SM4GCM");
  EXPECT_EQ(AlgorithmName(Algorithm::kHpkeP256Sha256Aes128Gcm), "HPKE-P256-SHA256-AES128GCM");
}

TEST(AlgorithmTest, ParseIgnoresCase) {
  EXPECT_EQ(*ParseAlgorithm("sm2"), Algorithm::kSm2);
  EXPECT_EQ(*ParseAlgorithm("Sm4-Gcm"), Algorithm::kSm4Gcm);
  EXPECT_EQ(*ParseAlgorithm("ecdsa-secp256k1"), Algorithm::kEcdsaSecp256k1);
  EXPECT_EQ(*ParseAlgorithm("hmac-sha-256"), Algorithm::kHmacSha256);
}

TEST(AlgorithmTest, UnknownNamesAreInvalidArgument) {
  for (const char* bad : {"", "SM5", "AES-192-GCM", "SHA256", " SM3", "SM3 ", "RSA-4096-PSS"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(ParseAlgorithm(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("unknown")));
  }
}

TEST(AlgorithmTest, KindsAndKeySizes) {
  EXPECT_EQ(KindOf(Algorithm::kSm3), AlgorithmKind::kHash);
  EXPECT_EQ(KindOf(Algorithm::kHmacSha256), AlgorithmKind::kMac);
  EXPECT_EQ(KindOf(Algorithm::kSm4Ctr), AlgorithmKind::kCipher);
  EXPECT_EQ(KindOf(Algorithm::kAes256Gcm), AlgorithmKind::kAead);
  EXPECT_EQ(KindOf(Algorithm::kEcdsaP256), AlgorithmKind::kSignature);
  EXPECT_EQ(KindOf(Algorithm::kRsa2048Oaep), AlgorithmKind::kPublicKeyEncryption);
  EXPECT_EQ(KindOf(Algorithm::kHpkeSm2Sm3Sm4Gcm), AlgorithmKind::kHybrid);
  for (int i = 0; i < kNumAlgorithms; ++i) {
    const Algorithm alg = static_cast<Algorithm>(i);
    const AlgorithmKind kind = KindOf(alg);
    const size_t key_size = SymmetricKeySize(alg);
    SCOPED_TRACE(std::string(AlgorithmName(alg)));
    if (kind == AlgorithmKind::kCipher || kind == AlgorithmKind::kAead) {
      const std::string name(AlgorithmName(alg));
      const bool wide = name.rfind("AES-256", 0) == 0 || name.rfind("SM4-XTS", 0) == 0;
      EXPECT_EQ(key_size, wide ? 32u : 16u);
    } else {
      EXPECT_EQ(key_size, 0u);
    }
  }
}

TEST(AlgorithmTest, AllAlgorithmsListsEveryValueInOrder) {
  absl::Span<const Algorithm> all = AllAlgorithms();
  ASSERT_EQ(all.size(), static_cast<size_t>(kNumAlgorithms));
  for (int i = 0; i < kNumAlgorithms; ++i) EXPECT_EQ(all[i], static_cast<Algorithm>(i));
}

TEST(AlgorithmTest, KindsAndModesComeFromTheTable) {
  for (Algorithm alg : AllAlgorithms()) {
    SCOPED_TRACE(AlgorithmName(alg));
    EXPECT_TRUE(HasKind(alg, KindOf(alg)));
    const bool symmetric =
        KindOf(alg) == AlgorithmKind::kCipher || KindOf(alg) == AlgorithmKind::kAead;
    EXPECT_EQ(CipherModeOf(alg) != CipherMode::kNone, symmetric);
    EXPECT_EQ(SymmetricKeySize(alg) != 0, symmetric);
  }
  EXPECT_TRUE(HasKind(Algorithm::kSm2, AlgorithmKind::kSignature));
  EXPECT_TRUE(HasKind(Algorithm::kSm2, AlgorithmKind::kPublicKeyEncryption));
  EXPECT_FALSE(HasKind(Algorithm::kEcdsaP256, AlgorithmKind::kPublicKeyEncryption));
  EXPECT_FALSE(HasKind(Algorithm::kRsa2048Oaep, AlgorithmKind::kSignature));
  EXPECT_EQ(CipherModeOf(Algorithm::kSm4Ecb), CipherMode::kEcb);
  EXPECT_EQ(CipherModeOf(Algorithm::kAes128Cbc), CipherMode::kCbc);
  EXPECT_EQ(CipherModeOf(Algorithm::kAes256Ctr), CipherMode::kCtr);
  EXPECT_EQ(CipherModeOf(Algorithm::kSm4Gcm), CipherMode::kGcm);
  EXPECT_EQ(CipherModeOf(Algorithm::kSm4Ccm), CipherMode::kCcm);
  EXPECT_EQ(CipherModeOf(Algorithm::kHpkeSm2Sm3Sm4Gcm), CipherMode::kNone);
}

}  // namespace
}  // namespace smcrypt
