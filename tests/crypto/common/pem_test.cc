// pem_test.cc — PEM encoding/decoding (RFC 7468) against OpenSSL's PEM and base64 codecs,
// with a bad-input table.
#include "smcrypt/pem.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <iostream>
#include <random>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

std::string Str(const SecretData& s) { return std::string(s.begin(), s.end()); }

// OpenSslPemWrite encodes with PEM_write_bio (64-column lines, as OpenSSL writes keys).
std::string OpenSslPemWrite(const std::string& label, const std::string& der) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio(bio, label.c_str(), "", reinterpret_cast<const unsigned char*>(der.data()),
                static_cast<long>(der.size()));
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string out(data, len);
  BIO_free(bio);
  return out;
}

TEST(PemTest, EncodeMatchesOpenSslAndRoundTrips) {
  const uint64_t seed = ::smcrypt::testing::TestSeed();
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  for (size_t len = 1; len < 300; ++len) {
    const std::string der = ::smcrypt::testing::RandomBytes(rng, len);
    const std::string pem = PemEncode("PRIVATE KEY", der);
    ASSERT_EQ(pem, OpenSslPemWrite("PRIVATE KEY", der)) << len;
    auto block = PemDecode(pem);
    ASSERT_THAT(block, IsOk()) << len;
    EXPECT_EQ(block->label, "PRIVATE KEY");
    EXPECT_EQ(Str(block->der), der);
  }
}

TEST(PemTest, KnownEncoding) {
  // RFC 4648 §10 vectors inside PEM.
  const struct {
    const char* in;
    const char* b64;
  } rows[] = {{"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
              {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& row : rows) {
    EXPECT_EQ(PemEncode("X", row.in),
              std::string("-----BEGIN X-----\n") + row.b64 + "\n-----END X-----\n");
  }
  // Exactly 48 bytes fill one 64-column line with no empty line after it.
  const std::string pem = PemEncode("SM4 KEY", std::string(48, '\xff'));
  EXPECT_EQ(pem, "-----BEGIN SM4 KEY-----\n" + std::string(64, '/') + "\n-----END SM4 KEY-----\n");
}

TEST(PemTest, DecodeIsTolerantOfLayout) {
  const std::string der = "\x30\x03\x02\x01\x07";
  const std::string pem = PemEncode("PUBLIC KEY", der);
  // CRLF line ends, text before and after, indentation and blank lines, short lines.
  const std::string crlf = absl::StrReplaceAll(pem, {{"\n", "\r\n"}});
  const std::string variants[] = {
      pem,
      crlf,
      "Subject: something\nanother line\n" + pem + "trailing text\n",
      "  -----BEGIN PUBLIC KEY-----  \n\n  MAMCAQc=  \n\n-----END PUBLIC KEY-----",
      "-----BEGIN PUBLIC KEY-----\nMAMC\nAQc=\n-----END PUBLIC KEY-----\n",
      "-----BEGIN PUBLIC KEY-----\nMA MC\tAQc=\n-----END PUBLIC KEY-----\n",
  };
  for (const std::string& text : variants) {
    auto block = PemDecode(text);
    ASSERT_THAT(block, IsOk()) << text;
    EXPECT_EQ(block->label, "PUBLIC KEY");
    EXPECT_EQ(Str(block->der), der);
  }
}

TEST(PemTest, DecodeAllReturnsEveryBlockInOrder) {
  const std::string text = "intro\n" + PemEncode("PUBLIC KEY", "one") + "between\n" +
                           PemEncode("PRIVATE KEY", "two") + PemEncode("SM4 KEY", "three");
  auto blocks = PemDecodeAll(text);
  ASSERT_THAT(blocks, IsOk());
  ASSERT_EQ(blocks->size(), 3u);
  EXPECT_EQ((*blocks)[0].label, "PUBLIC KEY");
  EXPECT_EQ(Str((*blocks)[0].der), "one");
  EXPECT_EQ((*blocks)[1].label, "PRIVATE KEY");
  EXPECT_EQ(Str((*blocks)[1].der), "two");
  EXPECT_EQ((*blocks)[2].label, "SM4 KEY");
  EXPECT_EQ(Str((*blocks)[2].der), "three");
  // PemDecode takes the first block only.
  auto first = PemDecode(text);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(first->label, "PUBLIC KEY");
  // A bad second block fails PemDecodeAll.
  EXPECT_THAT(PemDecodeAll(PemEncode("A", "x") + "-----BEGIN B-----\nZg=\n-----END B-----\n"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(PemDecodeAll("no pem here"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("PEM: no BEGIN line")));
}

TEST(PemTest, BadInputTable) {
  const struct {
    const char* name;
    std::string text;
    const char* message;
  } rows[] = {
      {"empty", "", "PEM: no BEGIN line"},
      {"no BEGIN", "MAMCAQc=\n-----END X-----\n", "PEM: no BEGIN line"},
      {"missing END", "-----BEGIN X-----\nMAMCAQc=\n", "PEM: missing END line for \"X\""},
      {"second BEGIN before END", "-----BEGIN X-----\nMAMC\n-----BEGIN X-----\n",
       "PEM: missing END line"},
      {"label mismatch", "-----BEGIN PUBLIC KEY-----\nMAMCAQc=\n-----END PRIVATE KEY-----\n",
       "PEM: END label \"PRIVATE KEY\" does not match BEGIN label \"PUBLIC KEY\""},
      {"BEGIN without dashes", "-----BEGIN X\nMAMCAQc=\n-----END X-----\n",
       "PEM: BEGIN line does not end in \"-----\""},
      {"END without dashes", "-----BEGIN X-----\nMAMCAQc=\n-----END X\n",
       "PEM: END line does not end in \"-----\""},
      {"bad label", "-----BEGIN X--Y-----\nMAMCAQc=\n-----END X--Y-----\n",
       "PEM: malformed label"},
      {"bad character", "-----BEGIN X-----\nMAMC*Qc=\n-----END X-----\n",
       "PEM: invalid base64 character 0x2a"},
      {"url-safe alphabet", "-----BEGIN X-----\nMA_CAQc=\n-----END X-----\n",
       "PEM: invalid base64 character 0x5f"},
      {"length not multiple of 4", "-----BEGIN X-----\nMAMCAQc\n-----END X-----\n",
       "PEM: base64 length 7 is not a multiple of 4"},
      {"padding in the middle", "-----BEGIN X-----\nZg==Zm8=\n-----END X-----\n",
       "PEM: base64 data after '=' padding"},
      {"three pads", "-----BEGIN X-----\nZ===\n-----END X-----\n",
       "PEM: more than two '=' padding characters"},
      {"padding only", "-----BEGIN X-----\n====\n-----END X-----\n",
       "PEM: more than two '=' padding characters"},
      {"pad at group start", "-----BEGIN X-----\nZm9v=Zg=\n-----END X-----\n",
       "PEM: base64 data after '=' padding"},
      {"non-canonical bits (==)", "-----BEGIN X-----\nZh==\n-----END X-----\n",
       "PEM: non-canonical base64"},
      {"non-canonical bits (=)", "-----BEGIN X-----\nZm9=\n-----END X-----\n",
       "PEM: non-canonical base64"},
      {"empty body", "-----BEGIN X-----\n\n-----END X-----\n", "PEM: empty body"},
      {"encrypted PEM headers",
       "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n"
       "MAMCAQc=\n-----END RSA PRIVATE KEY-----\n",
       "PEM: encapsulated headers"},
      {"NUL in body", std::string("-----BEGIN X-----\nMAMC\0Qc=\n-----END X-----\n",
                   sizeof("-----BEGIN X-----\nMAMC\0Qc=\n-----END X-----\n") - 1),
       "PEM: invalid base64 character 0x00"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_THAT(PemDecode(row.text),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(row.message)));
  }
}

TEST(PemTest, Base64AgreesWithOpenSslOnRandomText) {
  // Random bodies: whenever we accept, OpenSSL's EVP_DecodeBlock gives the same bytes;
  // every canonical body is accepted.
  const uint64_t seed = ::smcrypt::testing::TestSeed();
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed ^ 0xbe64);
  const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string body;
    const size_t n = 4 * (1 + rng() % 4);
    for (size_t j = 0; j < n; ++j) body.push_back(alphabet[rng() % alphabet.size()]);
    auto block = PemDecode("-----BEGIN X-----\n" + body + "\n-----END X-----\n");
    std::string absl_out;
    const bool canonical = absl::Base64Unescape(body, &absl_out) &&
                           absl::Base64Escape(absl_out) == body;
    EXPECT_EQ(block.ok(), canonical) << body << " " << block.status();
    if (!block.ok()) continue;
    ++accepted;
    std::string ossl(n, '\0');
    const int len = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(ossl.data()),
                                    reinterpret_cast<const unsigned char*>(body.data()), n);
    ASSERT_GE(len, 0) << body;
    size_t pads = 0;
    for (size_t j = body.size(); j > 0 && body[j - 1] == '='; --j) ++pads;
    ossl.resize(len - pads);  // EVP_DecodeBlock counts padding as zero bytes
    EXPECT_EQ(Str(block->der), ossl) << body;
  }
  EXPECT_GT(accepted, 100);
}

}  // namespace
}  // namespace smcrypt

namespace smcrypt {
namespace {

TEST(LooksLikePemTest, DecidesShortInputsByLengthAndFindsPem) {
  // Raw key material is never PEM, whatever its bytes say.
  EXPECT_FALSE(LooksLikePem(std::string(32, 'x')));
  EXPECT_FALSE(LooksLikePem(absl::StrCat("-----BEGIN", std::string(22, 'A'))));  // 32 bytes
  EXPECT_FALSE(LooksLikePem(std::string(65, '-')));
  const std::string pem = PemEncode("SM4 KEY", std::string(16, '\x01'));
  EXPECT_TRUE(LooksLikePem(pem));
  EXPECT_TRUE(LooksLikePem(absl::StrCat(" \r\n\t", pem)));
  EXPECT_FALSE(LooksLikePem(absl::StrCat("x", pem)));
  EXPECT_FALSE(LooksLikePem(std::string(200, 'A')));
}

}  // namespace
}  // namespace smcrypt
