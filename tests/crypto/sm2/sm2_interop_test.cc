// Ciphertext encodings other SM2 implementations produce, which smcrypt must read:
// C1 without its 04 prefix, and SM2Cipher with fixed-width coordinate INTEGERs.
#include <gtest/gtest.h>

#include <string>

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

TEST(Sm2InteropTest, DecryptsFixedWidthSm2Cipher) {
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
  int high_bit_cases = 0, leading_zero_cases = 0;
  for (int i = 0; i < 64; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(key.public_key(), "fixed width"));
    const std::string der = FixedWidthSm2Cipher(ct);
    if ((static_cast<uint8_t>(ct[1]) & 0x80) || (static_cast<uint8_t>(ct[33]) & 0x80)) {
      ++high_bit_cases;
    }
    if (ct[1] == 0 || ct[33] == 0) ++leading_zero_cases;
    ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(key, der, Sm2CiphertextFormat::kDer));
    EXPECT_EQ(pt, "fixed width");
  }
  // 64 random coordinate pairs: the top-bit case is all but certain to occur.
  EXPECT_GT(high_bit_cases, 0);
  (void)leading_zero_cases;
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
