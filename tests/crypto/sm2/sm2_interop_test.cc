// Ciphertext encodings other SM2 implementations produce: C1 without its 04 prefix, which
// smcrypt reads, and SM2Cipher with fixed-width coordinate INTEGERs, which is DER (and
// read) only when both coordinates' 32 bytes form minimal non-negative INTEGERs.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "crypto/common/der.h"
#include "smcrypt/sm2.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;

// FixedWidthSm2Cipher writes SM2Cipher with each coordinate as a 32-byte INTEGER, as
// fixed-width producers do (non-minimal when it starts with 00, "negative" when its top
// bit is set).
std::string FixedWidthSm2Cipher(absl::string_view c1c3c2) {
  der::Writer w;
  w.BeginSequence();
  w.AddTlv(der::kInteger, c1c3c2.substr(1, 32));
  w.AddTlv(der::kInteger, c1c3c2.substr(33, 32));
  w.AddOctetString(c1c3c2.substr(65, 32));
  w.AddOctetString(c1c3c2.substr(97));
  w.End();
  return std::move(w).Finish();
}

TEST(Sm2InteropTest, DecryptsUnprefixedC1InBothRawOrders) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
  for (size_t len : {0u, 1u, 31u, 32u, 33u, 100u}) {
    const std::string msg(len, 'm');
    for (Sm2CiphertextFormat f : {Sm2CiphertextFormat::kC1C3C2, Sm2CiphertextFormat::kC1C2C3}) {
      ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(key.public_key(), msg, f));
      ASSERT_EQ(ct[0], '\x04');
      const std::string unprefixed = ct.substr(1);
      ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(key, unprefixed, f));
      EXPECT_EQ(pt, msg);
      ASSERT_OK_AND_ASSIGN(std::string converted,
                           Sm2CiphertextConvert(unprefixed, f, Sm2CiphertextFormat::kDer));
      ASSERT_OK_AND_ASSIGN(std::string back,
                           Sm2CiphertextConvert(converted, Sm2CiphertextFormat::kDer, f));
      EXPECT_EQ(back, ct);
    }
  }
}

TEST(Sm2InteropTest, UnprefixedC1TooShortIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
  ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(key.public_key(), "abc"));
  // 64-byte C1 and a C3 cut short: neither reading has room for C3.
  EXPECT_THAT(Sm2Decrypt(key, ct.substr(1, 64 + 31)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// DerIntegerDefect names what is wrong with the 32 bytes `v` read as the contents of a
// DER INTEGER that must be non-negative (X.690 §8.3.2), or returns "" when nothing is.
std::string DerIntegerDefect(absl::string_view v) {
  const uint8_t b0 = static_cast<uint8_t>(v[0]), b1 = static_cast<uint8_t>(v[1]);
  if ((b0 == 0x00 && b1 < 0x80) || (b0 == 0xff && b1 >= 0x80)) return "non-minimal INTEGER";
  if (b0 >= 0x80) return "negative INTEGER";
  return "";
}

// A fixed-width coordinate is the DER INTEGER only when its 32 bytes are minimal and
// non-negative; otherwise the SM2Cipher is not DER and is INVALID_ARGUMENT, naming the
// coordinate and the defect.
TEST(Sm2InteropTest, FixedWidthSm2CipherIsReadOnlyWhereItIsDer) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
  int der_cases = 0, non_der_cases = 0;
  for (int i = 0; i < 64; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(key.public_key(), "fixed width"));
    const std::string fixed = FixedWidthSm2Cipher(ct);
    const std::string x_defect = DerIntegerDefect(ct.substr(1, 32));
    const std::string y_defect = DerIntegerDefect(ct.substr(33, 32));
    if (x_defect.empty() && y_defect.empty()) {
      ++der_cases;
      ASSERT_OK_AND_ASSIGN(std::string der, Sm2CiphertextConvert(ct, Sm2CiphertextFormat::kC1C3C2,
                                                                 Sm2CiphertextFormat::kDer));
      EXPECT_EQ(fixed, der);
      ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(key, fixed, Sm2CiphertextFormat::kDer));
      EXPECT_EQ(pt, "fixed width");
      continue;
    }
    ++non_der_cases;
    const std::string message = x_defect.empty() ? absl::StrCat("SM2Cipher C1 y: DER: ", y_defect)
                                                 : absl::StrCat("SM2Cipher C1 x: DER: ", x_defect);
    EXPECT_THAT(Sm2Decrypt(key, fixed, Sm2CiphertextFormat::kDer),
                StatusIs(absl::StatusCode::kInvalidArgument, message));
    EXPECT_THAT(
        Sm2CiphertextConvert(fixed, Sm2CiphertextFormat::kDer, Sm2CiphertextFormat::kC1C3C2),
        StatusIs(absl::StatusCode::kInvalidArgument, message));
  }
  // 64 random coordinate pairs: both cases are all but certain to occur (a pair is DER
  // with probability about 1/4).
  EXPECT_GT(der_cases, 0);
  EXPECT_GT(non_der_cases, 0);
}

TEST(Sm2InteropTest, Sm2CipherCoordinateLongerThan32BytesIsRejected) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
  ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(key.public_key(), "x"));
  der::Writer w;
  w.BeginSequence();
  w.AddTlv(der::kInteger, absl::StrCat("\x01", ct.substr(1, 32)));
  w.AddTlv(der::kInteger, ct.substr(33, 32));
  w.AddOctetString(ct.substr(65, 32));
  w.AddOctetString(ct.substr(97));
  w.End();
  EXPECT_THAT(Sm2Decrypt(key, std::move(w).Finish(), Sm2CiphertextFormat::kDer),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace smcrypt
