// aead_detached_test.cc — Aead::OpenDetached (smcrypt/primitives/aead.h) for every Aead:
// SM4-GCM and SM4-CCM (RFC 8998 §3.1–3.2), AES-128/256-GCM (NIST SP 800-38D).
//
// Oracles: the RFC 8998 Appendix A.1 and A.2 vectors with the tag given apart, and Open
// on the same ciphertext ‖ tag (itself checked against OpenSSL and Botan in the SM4 and
// OpenSSL suites) for random keys, nonces, aad and every length up to 97 bytes, at each
// tag size the algorithm allows.
#include <cstddef>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/aead.h"
#include "smcrypt/registry.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::ReadTestData;
using ::smcrypt::testing::TestSeed;

// Vector reads "name = hex" lines; indented lines without '=' continue the value.
std::map<std::string, std::string> Vector(absl::string_view text) {
  std::map<std::string, std::string> hex;
  std::string last;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::string_view s = absl::StripAsciiWhitespace(line);
    if (s.empty() || s[0] == '#') continue;
    const size_t eq = s.find('=');
    if (eq == absl::string_view::npos) {
      hex[last] += std::string(s);
      continue;
    }
    last = std::string(absl::StripAsciiWhitespace(s.substr(0, eq)));
    hex[last] = std::string(absl::StripAsciiWhitespace(s.substr(eq + 1)));
  }
  std::map<std::string, std::string> bytes;
  for (const auto& [k, v] : hex) bytes[k] = HexToBytes(v);
  return bytes;
}

TEST(AeadDetachedTest, Rfc8998AppendixAVectors) {
  for (const auto& [alg, file] : std::vector<std::pair<Algorithm, const char*>>{
           {Algorithm::kSm4Gcm, "sm4_gcm_rfc8998.txt"},
           {Algorithm::kSm4Ccm, "sm4_ccm_rfc8998.txt"}}) {
    SCOPED_TRACE(file);
    auto v = Vector(ReadTestData(file));
    ASSERT_EQ(v["tag"].size(), 16u);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, NewAead(alg, v["key"]));
    ASSERT_OK_AND_ASSIGN(std::string opened,
                         aead->OpenDetached(v["iv"], v["ciphertext"], v["tag"], v["aad"]));
    EXPECT_EQ(BytesToHex(opened), BytesToHex(v["plaintext"]));
    std::string bad_tag = v["tag"];
    bad_tag[15] ^= 0x01;
    EXPECT_THAT(aead->OpenDetached(v["iv"], v["ciphertext"], bad_tag, v["aad"]),
                ::smcrypt::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                             "decryption failed"));
  }
}

struct Case {
  const char* name;
  Algorithm alg;
  size_t key_size;
  std::vector<size_t> tag_sizes;
};

class AeadDetachedContractTest : public ::testing::TestWithParam<Case> {};

// OpenDetached(ct, tag) answers as Open(ct ‖ tag) does: the plaintext, or "decryption
// failed" for every flipped bit of the tag and of the ciphertext.
TEST_P(AeadDetachedContractTest, AnswersAsOpenOnTheJoinedInput) {
  const Case& c = GetParam();
  std::mt19937_64 rng(TestSeed());
  for (size_t tag_size : c.tag_sizes) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead,
                         NewAead(c.alg, RandomBytes(rng, c.key_size), tag_size));
    for (size_t len = 0; len <= 97; ++len) {
      SCOPED_TRACE(absl::StrCat("tag ", tag_size, " length ", len));
      const std::string nonce = RandomBytes(rng, aead->nonce_size());
      const std::string aad = RandomBytes(rng, len % 23);
      const std::string pt = RandomBytes(rng, len);
      ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(nonce, pt, aad));
      const absl::string_view ct = absl::string_view(sealed).substr(0, len);
      const absl::string_view tag = absl::string_view(sealed).substr(len);
      ASSERT_EQ(tag.size(), tag_size);
      ASSERT_OK_AND_ASSIGN(std::string opened, aead->OpenDetached(nonce, ct, tag, aad));
      EXPECT_EQ(opened, pt);
      ASSERT_OK_AND_ASSIGN(std::string joined, aead->Open(nonce, sealed, aad));
      EXPECT_EQ(joined, pt);
      for (size_t bit = 0; bit < 8 * sealed.size(); bit += (len < 8 ? 1 : 7)) {
        std::string flipped = sealed;
        flipped[bit / 8] ^= static_cast<char>(1u << (bit % 8));
        const absl::string_view fct = absl::string_view(flipped).substr(0, len);
        const absl::string_view ftag = absl::string_view(flipped).substr(len);
        EXPECT_THAT(aead->OpenDetached(nonce, fct, ftag, aad),
                    ::smcrypt::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                 "decryption failed"))
            << "bit " << bit;
      }
    }
  }
}

// A tag of another length is refused with both sizes named, before any work.
TEST_P(AeadDetachedContractTest, RefusesATagOfAnotherLength) {
  const Case& c = GetParam();
  std::mt19937_64 rng(TestSeed() + 1);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, NewAead(c.alg, RandomBytes(rng, c.key_size)));
  const std::string nonce = RandomBytes(rng, aead->nonce_size());
  ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(nonce, "plaintext", "aad"));
  const absl::string_view ct = absl::string_view(sealed).substr(0, 9);
  for (size_t n : {size_t{0}, size_t{12}, size_t{15}, size_t{17}}) {
    const std::string tag = sealed.substr(9, 16) + std::string(n > 16 ? n - 16 : 0, '\0');
    absl::StatusOr<std::string> r = aead->OpenDetached(nonce, ct, tag.substr(0, n), "aad");
    EXPECT_THAT(r, ::smcrypt::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                ::testing::HasSubstr(absl::StrCat(
                                                    "tag must be 16 bytes, got ", n))));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Aeads, AeadDetachedContractTest,
    ::testing::Values(Case{"Sm4Gcm", Algorithm::kSm4Gcm, 16, {12, 13, 14, 15, 16}},
                      Case{"Sm4Ccm", Algorithm::kSm4Ccm, 16, {4, 6, 8, 10, 12, 14, 16}},
                      Case{"Aes128Gcm", Algorithm::kAes128Gcm, 16, {12, 16}},
                      Case{"Aes256Gcm", Algorithm::kAes256Gcm, 32, {12, 16}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace smcrypt
