// sm3_test.cc — SM3 and HMAC-SM3: the GB/T 32905-2016 Appendix A examples, incremental
// hashing at every split, and differential tests against OpenSSL 3 (EVP_sm3, HMAC).
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/sm3.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::OpenSslHmac;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::TestSeed;
using ::testing::HasSubstr;

std::string DigestString(absl::string_view data) {
  auto d = Sm3Digest(data);
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

std::string OpenSslSm3(absl::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  EXPECT_EQ(EVP_Digest(data.data(), data.size(), md, &md_len, EVP_sm3(), nullptr), 1);
  return std::string(reinterpret_cast<const char*>(md), md_len);
}

std::string OpenSslHmacSm3(absl::string_view key, absl::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  EXPECT_NE(HMAC(EVP_sm3(), key.data(), static_cast<int>(key.size()),
                 reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &md_len),
            nullptr);
  return std::string(reinterpret_cast<const char*>(md), md_len);
}

// GB/T 32905-2016 Appendix A.1 and A.2.
struct Sm3Kat {
  const char* name;
  std::string message;
  const char* digest_hex;
};

std::vector<Sm3Kat> Kats() {
  std::string abcd16;
  for (int i = 0; i < 16; ++i) abcd16 += "abcd";
  return {
      {"A1_abc", "abc", "66c7f0f4 62eeedd9 d1f2d46b dc10e4e2 4167c487 5cf2f7a2 297da02b 8f4ba8e0"},
      {"A2_abcd_x16", abcd16,
       "debe9ff9 2275b8a1 38604889 c18e5a4d 6fdb70e5 387e5765 293dcba3 9c0c5732"},
  };
}

TEST(Sm3Test, StandardExamples) {
  for (const Sm3Kat& kat : Kats()) {
    SCOPED_TRACE(kat.name);
    const std::string want = HexToBytes(kat.digest_hex);
    EXPECT_EQ(BytesToHex(DigestString(kat.message)), BytesToHex(want));
    Sm3 h;
    h.Update(kat.message);
    EXPECT_EQ(BytesToHex(h.Finish()), BytesToHex(want));
    EXPECT_EQ(BytesToHex(OpenSslSm3(kat.message)), BytesToHex(want));  // oracle sanity
  }
}

TEST(Sm3Test, FinishResetsToEmptyMessage) {
  Sm3 h;
  h.Update("some data");
  (void)h.Finish();
  EXPECT_EQ(BytesToHex(h.Finish()), BytesToHex(OpenSslSm3("")));
  h.Update("abc");
  EXPECT_EQ(BytesToHex(h.Finish()), BytesToHex(DigestString("abc")));
}

TEST(Sm3Test, CopyForksTheComputation) {
  Sm3 h;
  h.Update("ab");
  Sm3 fork = h;
  h.Update("c");
  fork.Update("d");
  EXPECT_EQ(BytesToHex(h.Finish()), BytesToHex(DigestString("abc")));
  EXPECT_EQ(BytesToHex(fork.Finish()), BytesToHex(DigestString("abd")));
}

TEST(Sm3Test, IncrementalEverySplitPoint) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const std::string msg = RandomBytes(rng, 300);
  for (size_t len : {size_t{0}, size_t{1}, size_t{55}, size_t{56}, size_t{63}, size_t{64},
                     size_t{65}, size_t{119}, size_t{120}, size_t{128}, size_t{300}}) {
    const absl::string_view m(msg.data(), len);
    const std::string want = OpenSslSm3(m);
    for (size_t split = 0; split <= len; ++split) {
      Sm3 h;
      h.Update(m.substr(0, split));
      h.Update(m.substr(split));
      ASSERT_EQ(BytesToHex(h.Finish()), BytesToHex(want)) << "len " << len << " split " << split;
    }
    // Two split points.
    for (size_t s1 = 0; s1 <= len; s1 += 7) {
      for (size_t s2 = s1; s2 <= len; s2 += 5) {
        Sm3 h;
        h.Update(m.substr(0, s1));
        h.Update(m.substr(s1, s2 - s1));
        h.Update(m.substr(s2));
        ASSERT_EQ(BytesToHex(h.Finish()), BytesToHex(want))
            << "len " << len << " splits " << s1 << "," << s2;
      }
    }
  }
}

TEST(Sm3Test, OddChunkings) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed + 1);
  const std::string msg = RandomBytes(rng, 5000);
  const std::string want = OpenSslSm3(msg);
  for (size_t chunk : {1, 3, 7, 13, 31, 63, 64, 65, 127, 129, 1000}) {
    Sm3 h;
    for (size_t off = 0; off < msg.size(); off += chunk) {
      h.Update(absl::string_view(msg).substr(off, chunk));
    }
    EXPECT_EQ(BytesToHex(h.Finish()), BytesToHex(want)) << "chunk " << chunk;
  }
  // Random chunk sizes, including empty updates.
  Sm3 h;
  for (size_t off = 0; off < msg.size();) {
    const size_t chunk = std::min<size_t>(rng() % 150, msg.size() - off);
    h.Update(absl::string_view(msg).substr(off, chunk));
    off += chunk;
  }
  EXPECT_EQ(BytesToHex(h.Finish()), BytesToHex(want));
}

TEST(Sm3Test, MatchesOpenSslOnRandomInputs) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed + 2);
  for (int i = 0; i < 1200; ++i) {
    const size_t len = i <= 200 ? static_cast<size_t>(i) : rng() % 4097;
    const std::string msg = RandomBytes(rng, len);
    const std::string want = OpenSslSm3(msg);
    ASSERT_EQ(BytesToHex(DigestString(msg)), BytesToHex(want)) << "case " << i << " len " << len;
    Sm3 h;
    h.Update(absl::string_view(msg).substr(0, len / 3));
    h.Update(absl::string_view(msg).substr(len / 3));
    uint8_t out[kSm3DigestSize];
    h.FinishTo(out);
    ASSERT_EQ(BytesToHex(absl::string_view(reinterpret_cast<char*>(out), sizeof(out))),
              BytesToHex(want))
        << "case " << i << " len " << len;
  }
}

TEST(Sm3Test, Sizes) {
  Sm3 h;
  EXPECT_EQ(h.digest_size(), 32u);
  EXPECT_EQ(h.block_size(), 64u);
}

// --- Sm3Batch ---------------------------------------------------------------------

TEST(Sm3BatchTest, MixedLengthsEqualOneShot) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed + 3);
  std::vector<std::string> storage;
  for (size_t len : {0, 1, 55, 56, 64, 0, 65, 200, 1000, 3, 4096, 0}) {
    storage.push_back(RandomBytes(rng, len));
  }
  for (int i = 0; i < 40; ++i) storage.push_back(RandomBytes(rng, rng() % 700));
  std::vector<absl::string_view> messages(storage.begin(), storage.end());
  std::vector<uint8_t> out(kSm3DigestSize * messages.size() + 1, 0xaa);
  Sm3Batch(messages, out.data());
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_EQ(BytesToHex(absl::string_view(reinterpret_cast<char*>(&out[32 * i]), 32)),
              BytesToHex(OpenSslSm3(messages[i])))
        << "message " << i << " len " << messages[i].size();
  }
  EXPECT_EQ(out.back(), 0xaa) << "wrote past the end";
}

TEST(Sm3BatchTest, OneMessage) {
  std::vector<absl::string_view> messages = {"abc"};
  uint8_t out[kSm3DigestSize];
  Sm3Batch(messages, out);
  EXPECT_EQ(BytesToHex(absl::string_view(reinterpret_cast<char*>(out), 32)),
            BytesToHex(HexToBytes(Kats()[0].digest_hex)));
}

TEST(Sm3BatchTest, ZeroMessagesWritesNothing) {
  uint8_t sentinel = 0x5a;
  Sm3Batch(absl::Span<const absl::string_view>(), &sentinel);
  EXPECT_EQ(sentinel, 0x5a);
}

// --- HMAC-SM3 ---------------------------------------------------------------------

TEST(HmacSm3Test, MatchesOpenSslOnRandomKeysAndMessages) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed + 4);
  for (int i = 0; i < 400; ++i) {
    const size_t key_len = i < 200 ? static_cast<size_t>(i + 1) : 1 + rng() % 200;
    const std::string key = RandomBytes(rng, key_len);
    const std::string msg = RandomBytes(rng, rng() % 1500);
    ASSERT_OK_AND_ASSIGN(auto mac, HmacSm3::New(key));
    ASSERT_OK_AND_ASSIGN(std::string tag, mac->ComputeMac(msg));
    ASSERT_EQ(BytesToHex(tag), BytesToHex(OpenSslHmacSm3(key, msg)))
        << "case " << i << " key_len " << key_len << " msg_len " << msg.size();
    ASSERT_THAT(mac->VerifyMac(tag, msg), IsOk());
    EXPECT_EQ(mac->mac_size(), 32u);
  }
}

TEST(HmacSm3Test, ObjectIsReusable) {
  ASSERT_OK_AND_ASSIGN(auto mac, HmacSm3::New("key"));
  ASSERT_OK_AND_ASSIGN(std::string t1, mac->ComputeMac("message"));
  ASSERT_OK_AND_ASSIGN(std::string t2, mac->ComputeMac("message"));
  ASSERT_OK_AND_ASSIGN(std::string t3, mac->ComputeMac("messagf"));
  EXPECT_EQ(t1, t2);
  EXPECT_NE(t1, t3);
}

TEST(HmacSm3Test, VerifyRejectsEveryFlippedBitAndWrongLengths) {
  ASSERT_OK_AND_ASSIGN(auto mac, HmacSm3::New(std::string(100, 'k')));
  const std::string msg = "the message";
  ASSERT_OK_AND_ASSIGN(std::string tag, mac->ComputeMac(msg));
  for (size_t bit = 0; bit < 8 * tag.size(); ++bit) {
    std::string bad = tag;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_THAT(mac->VerifyMac(bad, msg),
                StatusIs(absl::StatusCode::kInvalidArgument, "MAC verification failed"))
        << "bit " << bit;
  }
  for (size_t len : {0, 1, 16, 31, 33, 64}) {
    std::string bad = tag;
    bad.resize(len, '\0');
    EXPECT_THAT(mac->VerifyMac(bad, msg),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("MAC verification failed")))
        << "len " << len;
  }
  EXPECT_THAT(mac->VerifyMac(tag, "the messagf"),
              StatusIs(absl::StatusCode::kInvalidArgument, "MAC verification failed"));
}

// RFC 2104 §2 sets no lower bound on the key length: the empty key is K0 = 64 zero bytes.
TEST(HmacSm3Test, EmptyKeyMatchesOpenSsl) {
  ASSERT_OK_AND_ASSIGN(auto mac, HmacSm3::New(""));
  ASSERT_OK_AND_ASSIGN(auto zeros, HmacSm3::New(std::string(kSm3BlockSize, '\0')));
  for (const std::string& msg :
       {std::string(), std::string("abc"), std::string(64, 'm'), std::string(1000, '\xa5')}) {
    SCOPED_TRACE(::testing::Message() << "message of " << msg.size() << " bytes");
    ASSERT_OK_AND_ASSIGN(std::string tag, mac->ComputeMac(msg));
    EXPECT_EQ(BytesToHex(tag), BytesToHex(OpenSslHmac("SM3", "", msg)));
    ASSERT_OK_AND_ASSIGN(std::string same, zeros->ComputeMac(msg));
    EXPECT_EQ(BytesToHex(tag), BytesToHex(same));
    EXPECT_THAT(mac->VerifyMac(tag, msg), IsOk());
  }
}

}  // namespace
}  // namespace smcrypt
