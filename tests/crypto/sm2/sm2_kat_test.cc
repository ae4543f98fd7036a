// Known answers from GB/T 32918.5-2017 (GM/T 0003.5-2012) on sm2p256v1: the signature
// example (public key, Z_A, e, r, s with the standard's fixed k) and the encryption example
// (C1 ‖ C3 ‖ C2 with the same k), from tests/testdata/sm2_gbt32918_5_examples.txt.
#include <map>
#include <string>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "crypto/sm2/sm2_testing.h"
#include "gtest/gtest.h"
#include "smcrypt/sm2.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt::testing {
namespace {

std::map<std::string, std::string> LoadExamples() {
  std::map<std::string, std::string> out;
  for (absl::string_view line :
       absl::StrSplit(ReadTestData("sm2_gbt32918_5_examples.txt"), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits(" = ", 1));
    absl::string_view v = kv.second;
    if (absl::ConsumePrefix(&v, "\"") && absl::ConsumeSuffix(&v, "\"")) {
      out[kv.first] = std::string(v);
    } else {
      out[kv.first] = HexToBytes(v);
    }
  }
  return out;
}

class Sm2KatTest : public ::testing::Test {
 protected:
  std::map<std::string, std::string> ex_ = LoadExamples();
};

TEST_F(Sm2KatTest, SignatureExample) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::FromScalar(ex_["sign.d"]));
  const std::string want_point = std::string("\x04", 1) + ex_["sign.xA"] + ex_["sign.yA"];
  EXPECT_EQ(BytesToHex(key.public_key().ToPoint()), BytesToHex(want_point));

  ASSERT_OK_AND_ASSIGN(auto z, Sm2ComputeZ(key.public_key(), ex_["sign.id"]));
  EXPECT_EQ(BytesToHex(std::string(z.begin(), z.end())), BytesToHex(ex_["sign.ZA"]));
  ASSERT_OK_AND_ASSIGN(auto e, Sm2ComputeE(key.public_key(), ex_["sign.id"], ex_["sign.message"]));
  const std::string es(e.begin(), e.end());
  EXPECT_EQ(BytesToHex(es), BytesToHex(ex_["sign.e"]));

  ASSERT_OK_AND_ASSIGN(std::string sig, Sm2SignDigestWithKForTesting(key, es, ex_["sign.k"]));
  EXPECT_EQ(BytesToHex(sig), BytesToHex(ex_["sign.r"] + ex_["sign.s"]));
  EXPECT_OK(Sm2VerifyDigest(key.public_key(), es, ex_["sign.r"] + ex_["sign.s"]));

  // k·G of the example ((x1, y1) in the standard) is C1 of the encryption example too.
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey k_as_key, Sm2PrivateKey::FromScalar(ex_["sign.k"]));
  EXPECT_EQ(BytesToHex(k_as_key.public_key().ToPoint()),
            BytesToHex(std::string("\x04", 1) + ex_["sign.x1"] + ex_["sign.y1"]));
}

TEST_F(Sm2KatTest, EncryptionExample) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::FromScalar(ex_["enc.d"]));
  const std::string c1 = ex_["enc.C1"], c2 = ex_["enc.C2"], c3 = ex_["enc.C3"];
  ASSERT_EQ(c1.size(), 65u);
  ASSERT_OK_AND_ASSIGN(std::string ct, Sm2EncryptWithKForTesting(key.public_key(),
                                                                 ex_["enc.message"],
                                                                 ex_["enc.k"]));
  EXPECT_EQ(BytesToHex(ct), BytesToHex(c1 + c3 + c2));
  ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(key, c1 + c3 + c2));
  EXPECT_EQ(pt, ex_["enc.message"]);

  // The legacy order and a compressed C1 carry the same fields.
  ASSERT_OK_AND_ASSIGN(ct, Sm2EncryptWithKForTesting(key.public_key(), ex_["enc.message"],
                                                     ex_["enc.k"], Sm2CiphertextFormat::kC1C2C3));
  EXPECT_EQ(BytesToHex(ct), BytesToHex(c1 + c2 + c3));
  ASSERT_OK_AND_ASSIGN(pt, Sm2Decrypt(key, c1 + c2 + c3, Sm2CiphertextFormat::kC1C2C3));
  EXPECT_EQ(pt, ex_["enc.message"]);
  ASSERT_OK_AND_ASSIGN(ct, Sm2EncryptWithKForTesting(key.public_key(), ex_["enc.message"],
                                                     ex_["enc.k"], Sm2CiphertextFormat::kC1C3C2,
                                                     /*compress_c1=*/true));
  // y1 = ...F0 is even: prefix 02.
  EXPECT_EQ(BytesToHex(ct), BytesToHex(std::string("\x02", 1) + c1.substr(1, 32) + c3 + c2));
  ASSERT_OK_AND_ASSIGN(pt, Sm2Decrypt(key, ct));
  EXPECT_EQ(pt, ex_["enc.message"]);

  // DER SM2Cipher of the same fields (GM/T 0009 §7.2): y has its top bit set, so its
  // INTEGER carries a leading zero.
  const std::string der = HexToBytes("307C0220") + c1.substr(1, 32) + HexToBytes("022100") +
                          c1.substr(33, 32) + HexToBytes("0420") + c3 + HexToBytes("0413") + c2;
  ASSERT_OK_AND_ASSIGN(ct, Sm2EncryptWithKForTesting(key.public_key(), ex_["enc.message"],
                                                     ex_["enc.k"], Sm2CiphertextFormat::kDer));
  EXPECT_EQ(BytesToHex(ct), BytesToHex(der));
  ASSERT_OK_AND_ASSIGN(pt, Sm2Decrypt(key, der, Sm2CiphertextFormat::kDer));
  EXPECT_EQ(pt, ex_["enc.message"]);
}

TEST_F(Sm2KatTest, FixedKSeamRejectsOutOfRangeK) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::FromScalar(ex_["sign.d"]));
  const std::string e(32, '\x01');
  EXPECT_THAT(Sm2SignDigestWithKForTesting(key, e, std::string(32, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Sm2SignDigestWithKForTesting(key, e, std::string(32, '\xff')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Sm2EncryptWithKForTesting(key.public_key(), "x", std::string(31, '\x01')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace smcrypt::testing
