// sm4_kat_test.cc — SM4 block functions: the GB/T 32907-2016 Appendix A examples, and
// the block API against OpenSSL 3's SM4-ECB.
#include <openssl/evp.h>

#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/sm4.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::TestSeed;
using ::testing::HasSubstr;

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
uint8_t* U8(std::string& s) { return reinterpret_cast<uint8_t*>(s.data()); }

// GB/T 32907-2016 Appendix A, example 1: one encryption.
TEST(Sm4KatTest, AppendixAExample1) {
  const std::string key = HexToBytes("0123456789abcdeffedcba9876543210");
  const std::string want = HexToBytes("681edf34d206965e86b3e94f536e4246");
  Sm4Key k;
  ASSERT_OK(Sm4ExpandKey(key, &k));
  std::string out(16, '\0');
  Sm4EncryptBlocks(k, U8(key), U8(out), 1);  // plaintext = key
  EXPECT_EQ(BytesToHex(out), BytesToHex(want));
  Sm4DecryptBlocks(k, U8(out), U8(out), 1);
  EXPECT_EQ(BytesToHex(out), BytesToHex(key));
}

// GB/T 32907-2016 Appendix A, example 2: the same key and plaintext, encrypted
// 1,000,000 times.
TEST(Sm4KatTest, AppendixAExample2MillionIterations) {
  const std::string key = HexToBytes("0123456789abcdeffedcba9876543210");
  Sm4Key k;
  ASSERT_OK(Sm4ExpandKey(key, &k));
  std::string block = key;
  for (int i = 0; i < 1000000; ++i) Sm4EncryptBlocks(k, U8(block), U8(block), 1);
  EXPECT_EQ(BytesToHex(block), "595298c7c6fd271f0402f804c33d3f66");
  for (int i = 0; i < 1000000; ++i) Sm4DecryptBlocks(k, U8(block), U8(block), 1);
  EXPECT_EQ(BytesToHex(block), BytesToHex(key));
}

TEST(Sm4KatTest, RoundKeysOfAppendixA) {
  // GB/T 32907-2016 Appendix A lists rk_0 and rk_31 for example 1's key.
  Sm4Key k;
  ASSERT_OK(Sm4ExpandKey(HexToBytes("0123456789abcdeffedcba9876543210"), &k));
  EXPECT_EQ(k.rk_enc[0], 0xf12186f9u);
  EXPECT_EQ(k.rk_enc[31], 0x9124a012u);
  for (int i = 0; i < kSm4Rounds; ++i) EXPECT_EQ(k.rk_dec[i], k.rk_enc[31 - i]);
}

TEST(Sm4KatTest, ExpandKeyRejectsWrongSizes) {
  Sm4Key k;
  for (size_t len : {0, 1, 15, 17, 24, 32}) {
    EXPECT_THAT(Sm4ExpandKey(std::string(len, 'k'), &k),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("expected 16 bytes, got " + std::to_string(len))));
  }
}

std::string OpenSslEcb(const std::string& key, const std::string& in, bool encrypt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::string out(in.size() + 16, '\0');
  int len1 = 0, len2 = 0;
  EXPECT_EQ(EVP_CipherInit_ex(ctx, EVP_sm4_ecb(), nullptr, U8(key), nullptr, encrypt ? 1 : 0), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EXPECT_EQ(EVP_CipherUpdate(ctx, U8(out), &len1, U8(in), static_cast<int>(in.size())), 1);
  EXPECT_EQ(EVP_CipherFinal_ex(ctx, U8(out) + len1, &len2), 1);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(len1 + len2);
  return out;
}

TEST(Sm4KatTest, BlockFunctionsMatchOpenSslEcb) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int iter = 0; iter < 300; ++iter) {
    const std::string key = RandomBytes(rng, 16);
    const size_t num_blocks = iter < 40 ? iter : rng() % 80;
    const std::string pt = RandomBytes(rng, 16 * num_blocks);
    Sm4Key k;
    ASSERT_OK(Sm4ExpandKey(key, &k));
    std::string ct(pt.size(), '\0');
    Sm4EncryptBlocks(k, U8(pt), U8(ct), num_blocks);
    ASSERT_EQ(BytesToHex(ct), BytesToHex(OpenSslEcb(key, pt, true))) << "blocks " << num_blocks;
    std::string back(pt.size(), '\0');
    Sm4DecryptBlocks(k, U8(ct), U8(back), num_blocks);
    ASSERT_EQ(BytesToHex(back), BytesToHex(pt));
  }
}

TEST(Sm4KatTest, Ctr32IncrementsOnlyTheLastWord) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed + 1);
  const std::string key = RandomBytes(rng, 16);
  Sm4Key k;
  ASSERT_OK(Sm4ExpandKey(key, &k));
  for (uint32_t start : {0u, 1u, 0xfffffff0u, 0xfffffffeu, 0xffffffffu}) {
    std::string cb = RandomBytes(rng, 12) + std::string(4, '\0');
    for (int i = 0; i < 4; ++i) cb[12 + i] = static_cast<char>(start >> (24 - 8 * i));
    const size_t num_blocks = 37;
    const std::string in = RandomBytes(rng, 16 * num_blocks);
    // Expected: ECB of the explicit counter blocks, XORed into the input.
    std::string counters;
    for (size_t i = 0; i < num_blocks; ++i) {
      std::string c = cb;
      const uint32_t v = start + static_cast<uint32_t>(i);
      for (int b = 0; b < 4; ++b) c[12 + b] = static_cast<char>(v >> (24 - 8 * b));
      counters += c;
    }
    std::string want = OpenSslEcb(key, counters, true);
    for (size_t i = 0; i < want.size(); ++i) want[i] ^= in[i];
    std::string out(in.size(), '\0');
    Sm4Ctr32EncryptBlocks(k, U8(cb), U8(in), U8(out), num_blocks);
    EXPECT_EQ(BytesToHex(out), BytesToHex(want)) << "start " << start;
    std::string inplace = in;
    Sm4Ctr32EncryptBlocks(k, U8(cb), U8(inplace), U8(inplace), num_blocks);
    EXPECT_EQ(BytesToHex(inplace), BytesToHex(want)) << "in place, start " << start;
  }
}

}  // namespace
}  // namespace smcrypt
