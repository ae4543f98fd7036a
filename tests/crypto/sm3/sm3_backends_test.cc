// sm3_backends_test.cc — every compiled SM3 back end against generic and the standard,
// and the dispatch choice for this CPU (STYLE.md items 19–20).
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "crypto/cpu/backends.h"
#include "crypto/sm3/sm3_internal.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm3.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::TestSeed;

const Sm3Kernels& GenericKernels() {
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    if (std::string(k->name) == "generic") return *k;
  }
  ADD_FAILURE() << "no generic SM3 back end";
  std::abort();
}

class Sm3BackendTest : public ::testing::TestWithParam<const Sm3Kernels*> {
 protected:
  void SetUp() override {
    const uint32_t missing = GetParam()->required_features & ~GetCpuFeatures();
    if (missing != 0) {
      GTEST_SKIP() << "back end " << GetParam()->name << " needs CPU features "
                   << FormatCpuFeatureList(missing) << " that this machine lacks (or are masked)";
    }
  }
};

std::string Digest(const Sm3Kernels& k, absl::string_view data) {
  uint8_t out[kSm3DigestSize];
  Sm3DigestWithKernel(k, data, out);
  return std::string(reinterpret_cast<char*>(out), sizeof(out));
}

TEST_P(Sm3BackendTest, StandardExample) {
  EXPECT_EQ(BytesToHex(Digest(*GetParam(), "abc")),
            BytesToHex(HexToBytes(
                "66c7f0f4 62eeedd9 d1f2d46b dc10e4e2 4167c487 5cf2f7a2 297da02b 8f4ba8e0")));
}

TEST_P(Sm3BackendTest, MatchesGenericOnEveryLength) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const std::string data = RandomBytes(rng, 1024 + 16);
  for (size_t len = 0; len <= 1024; ++len) {
    for (size_t offset : {size_t{0}, 1 + len % 15}) {  // aligned and misaligned input
      const absl::string_view m(data.data() + offset, len);
      ASSERT_EQ(BytesToHex(Digest(*GetParam(), m)), BytesToHex(Digest(GenericKernels(), m)))
          << "len " << len << " offset " << offset;
    }
  }
}

TEST_P(Sm3BackendTest, CompressBlocksMatchesGeneric) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed + 1);
  for (size_t num_blocks = 0; num_blocks <= 33; ++num_blocks) {
    const std::string data = RandomBytes(rng, 64 * num_blocks);
    uint32_t got[8], want[8];
    for (int i = 0; i < 8; ++i) got[i] = want[i] = static_cast<uint32_t>(rng());
    GetParam()->compress_blocks(got, reinterpret_cast<const uint8_t*>(data.data()), num_blocks);
    Sm3GenericCompressBlocks(want, reinterpret_cast<const uint8_t*>(data.data()), num_blocks);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(got[i], want[i]) << "num_blocks " << num_blocks;
  }
}

TEST_P(Sm3BackendTest, BatchMatchesGeneric) {
  if (GetParam()->batch == nullptr) GTEST_SKIP() << GetParam()->name << " has no batch kernel";
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed + 2);
  for (size_t n = 0; n <= 40; ++n) {
    std::vector<std::string> storage;
    for (size_t i = 0; i < n; ++i) storage.push_back(RandomBytes(rng, rng() % 1025));
    std::vector<absl::string_view> msgs(storage.begin(), storage.end());
    std::vector<uint8_t> out(32 * n + 1, 0xcc);
    GetParam()->batch(msgs.data(), msgs.size(), out.data());
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(BytesToHex(absl::string_view(reinterpret_cast<char*>(&out[32 * i]), 32)),
                BytesToHex(Digest(GenericKernels(), msgs[i])))
          << "n " << n << " message " << i;
    }
    ASSERT_EQ(out.back(), 0xcc);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, Sm3BackendTest,
                         ::testing::ValuesIn(Sm3AllKernelsForTesting()),
                         [](const ::testing::TestParamInfo<const Sm3Kernels*>& info) {
                           return std::string(info.param->name);
                         });

TEST(Sm3DispatchTest, ActiveIsFirstSupportedInPriorityOrder) {
  const uint32_t features = GetCpuFeatures();
  const Sm3Kernels* expected = nullptr;
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    if (internal::HasFeatures(features, k->required_features)) {
      expected = k;
      break;
    }
  }
  ASSERT_NE(expected, nullptr);
  EXPECT_STREQ(Sm3ActiveKernels().name, expected->name);
  EXPECT_STREQ(internal::Sm3ActiveKernelName(), expected->name);
  EXPECT_STREQ(Sm3AllKernelsForTesting().back()->name, "generic");
  EXPECT_EQ(Sm3AllKernelsForTesting().back()->required_features, 0u);
}

}  // namespace
}  // namespace smcrypt
