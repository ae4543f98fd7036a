// aead_detached_test.cc — Aead::OpenDetached (smcrypt/primitives/aead.h) on the known
// answers of RFC 8998 Appendix A.1 (SM4-GCM) and A.2 (SM4-CCM), the tag given apart. The
// rest of its contract (every back end, every length and tag size, every flipped bit, a
// tag of another length) is in the AEAD contract suite (tests/crypto/aead_contract_test.h).
#include <cstddef>
#include <map>
#include <memory>
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
using ::smcrypt::testing::ReadTestData;

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

}  // namespace
}  // namespace smcrypt
