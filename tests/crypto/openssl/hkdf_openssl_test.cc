// hkdf_openssl_test.cc — HKDF-SHA256 (hkdf_openssl.h) against RFC 5869 Appendix A.1–A.3
// (A.3: no salt, the zero-salt path; A.2: three expand blocks), its argument errors, and
// one process-wide HMAC template used from several threads.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "crypto/openssl/hkdf_openssl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::StatusIs;

std::string Range(int from, int to) {  // bytes from, from + 1, ..., to − 1
  std::string s;
  for (int i = from; i < to; ++i) s.push_back(static_cast<char>(i));
  return s;
}

struct Rfc5869Case {
  const char* name;
  std::string ikm, salt, info;
  size_t length;
  const char* prk;
  const char* okm;
};

std::vector<Rfc5869Case> Cases() {
  return {
      {"A.1", std::string(22, '\x0b'), Range(0x00, 0x0d), Range(0xf0, 0xfa), 42,
       "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
       "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"},
      {"A.2", Range(0x00, 0x50), Range(0x60, 0xb0), Range(0xb0, 0x100), 82,
       "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
       "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
       "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
       "cc30c58179ec3e87c14c01d5c1f3434f1d87"},
      {"A.3", std::string(22, '\x0b'), "", "", 42,
       "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
       "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"},
  };
}

TEST(HkdfSha256Test, Rfc5869Vectors) {
  for (const Rfc5869Case& c : Cases()) {
    ASSERT_OK_AND_ASSIGN(SecretData prk, HkdfSha256Extract(c.salt, c.ikm));
    EXPECT_EQ(BytesToHex(SecretDataAsStringView(prk)), c.prk) << c.name;
    ASSERT_OK_AND_ASSIGN(SecretData okm,
                         HkdfSha256Expand(SecretDataAsStringView(prk), c.info, c.length));
    EXPECT_EQ(BytesToHex(SecretDataAsStringView(okm)), c.okm) << c.name;
    // Every shorter length is a prefix (the block chaining T(i − 1) ‖ info ‖ i).
    for (size_t n = 1; n < c.length; n += 15) {
      ASSERT_OK_AND_ASSIGN(SecretData part,
                           HkdfSha256Expand(SecretDataAsStringView(prk), c.info, n));
      EXPECT_EQ(BytesToHex(SecretDataAsStringView(part)),
                std::string(c.okm).substr(0, 2 * n))
          << c.name << " length " << n;
    }
  }
  // A salt of 32 zero bytes is the same as no salt (RFC 5869 §2.2).
  ASSERT_OK_AND_ASSIGN(SecretData zero, HkdfSha256Extract(std::string(32, '\0'), "ikm"));
  ASSERT_OK_AND_ASSIGN(SecretData none, HkdfSha256Extract("", "ikm"));
  EXPECT_EQ(zero, none);
}

TEST(HkdfSha256Test, ArgumentErrors) {
  const std::string prk = HexToBytes(Cases()[0].prk);
  EXPECT_THAT(HkdfSha256Extract("salt", ""),
              StatusIs(absl::StatusCode::kInvalidArgument, "HKDF-SHA256 extract: empty ikm"));
  EXPECT_THAT(HkdfSha256Expand(prk, "", 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "HKDF-SHA256 expand: length must be 1 to 8160, got 0"));
  EXPECT_THAT(HkdfSha256Expand(prk, "", 8161),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "HKDF-SHA256 expand: length must be 1 to 8160, got 8161"));
  EXPECT_THAT(HkdfSha256Expand(prk.substr(0, 31), "", 32),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "HKDF-SHA256 expand: PRK of at least 32 bytes, got 31"));
  ASSERT_OK_AND_ASSIGN(SecretData longest, HkdfSha256Expand(prk, "", 8160));
  EXPECT_EQ(longest.size(), 8160u);
}

TEST(HkdfSha256Test, ManyThreadsShareTheTemplates) {
  const std::vector<Rfc5869Case> cases = Cases();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const Rfc5869Case& c = cases[(t + i) % cases.size()];
        absl::StatusOr<SecretData> prk = HkdfSha256Extract(c.salt, c.ikm);
        absl::StatusOr<SecretData> okm =
            prk.ok() ? HkdfSha256Expand(SecretDataAsStringView(*prk), c.info, c.length)
                     : prk.status();
        if (!okm.ok() || BytesToHex(SecretDataAsStringView(*okm)) != c.okm) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace smcrypt
