// sm4_backends_test.cc — every compiled SM4 back end against generic and the standard,
// and the dispatch choice for this CPU (docs/contributing.md, house style 19–20).
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "crypto/cpu/backends.h"
#include "crypto/sm4/sm4_internal.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm4.h"
#include "tests/crypto/cpu/dispatch_checks.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::TestSeed;

const Sm4Kernels& GenericKernels() {
  for (const Sm4Kernels* k : Sm4AllKernelsForTesting()) {
    if (std::string(k->name) == "generic") return *k;
  }
  ADD_FAILURE() << "no generic SM4 back end";
  std::abort();
}

size_t WidestBatch() {
  size_t w = 1;
  for (const Sm4Kernels* k : Sm4AllKernelsForTesting()) w = std::max(w, k->parallel_blocks);
  return w;
}

class Sm4BackendTest : public ::testing::TestWithParam<const Sm4Kernels*> {
 protected:
  void SetUp() override {
    const uint32_t missing = GetParam()->required_features & ~GetCpuFeatures();
    if (missing != 0) {
      GTEST_SKIP() << "back end " << GetParam()->name << " needs CPU features "
                   << FormatCpuFeatureList(missing) << " that this machine lacks (or are masked)";
    }
  }
};

TEST_P(Sm4BackendTest, StandardExampleBothDirections) {
  const std::string key = HexToBytes("0123456789abcdeffedcba9876543210");
  Sm4Key k;
  ASSERT_OK(Sm4ExpandKey(key, &k));
  uint8_t buf[16];
  GetParam()->encrypt_blocks(k.rk_enc, reinterpret_cast<const uint8_t*>(key.data()), buf, 1);
  EXPECT_EQ(BytesToHex(std::string(reinterpret_cast<char*>(buf), 16)),
            "681edf34d206965e86b3e94f536e4246");
  GetParam()->encrypt_blocks(k.rk_dec, buf, buf, 1);
  EXPECT_EQ(BytesToHex(std::string(reinterpret_cast<char*>(buf), 16)), BytesToHex(key));
}

// Runs `fn` (a back end's or generic's) over buffers at the given offsets and returns
// the output; in place when out_offset < 0.
template <typename Fn>
std::string RunAt(Fn fn, const std::string& input, size_t in_offset, int out_offset) {
  std::vector<uint8_t> in_buf(input.size() + 32), out_buf(input.size() + 32);
  std::memcpy(in_buf.data() + in_offset, input.data(), input.size());
  if (out_offset < 0) {
    fn(in_buf.data() + in_offset, in_buf.data() + in_offset);
    return std::string(reinterpret_cast<char*>(in_buf.data() + in_offset), input.size());
  }
  fn(in_buf.data() + in_offset, out_buf.data() + out_offset);
  return std::string(reinterpret_cast<char*>(out_buf.data() + out_offset), input.size());
}

TEST_P(Sm4BackendTest, EncryptAndDecryptMatchGeneric) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const size_t max_blocks = 2 * WidestBatch() + 1;
  for (size_t n = 0; n <= max_blocks; ++n) {
    Sm4Key k;
    ASSERT_OK(Sm4ExpandKey(RandomBytes(rng, 16), &k));
    const std::string in = RandomBytes(rng, 16 * n);
    for (const uint32_t* rk : {k.rk_enc, k.rk_dec}) {
      const std::string want = RunAt(
          [&](const uint8_t* i, uint8_t* o) { GenericKernels().encrypt_blocks(rk, i, o, n); },
          in, 0, 0);
      for (size_t in_off = 0; in_off < 16; ++in_off) {
        for (int out_off : {-1, 0, static_cast<int>(15 - in_off), static_cast<int>(in_off)}) {
          const std::string got = RunAt(
              [&](const uint8_t* i, uint8_t* o) { GetParam()->encrypt_blocks(rk, i, o, n); }, in,
              in_off, out_off);
          ASSERT_EQ(BytesToHex(got), BytesToHex(want))
              << "blocks " << n << " in offset " << in_off << " out offset " << out_off
              << (rk == k.rk_enc ? " encrypt" : " decrypt");
        }
      }
    }
  }
}

TEST_P(Sm4BackendTest, Ctr32MatchesGenericAcrossTheWrap) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed + 1);
  const size_t max_blocks = 2 * WidestBatch() + 1;
  for (size_t n = 0; n <= max_blocks; ++n) {
    Sm4Key k;
    ASSERT_OK(Sm4ExpandKey(RandomBytes(rng, 16), &k));
    std::string cb = RandomBytes(rng, 16);
    if (n % 2 == 0) std::memset(cb.data() + 12, 0xff, 3);  // land near 2^32 sometimes
    const uint8_t* cbp = reinterpret_cast<const uint8_t*>(cb.data());
    const std::string in = RandomBytes(rng, 16 * n);
    const std::string want = RunAt(
        [&](const uint8_t* i, uint8_t* o) {
          GenericKernels().ctr32_encrypt_blocks(k.rk_enc, cbp, i, o, n);
        },
        in, 0, 0);
    for (size_t in_off = 0; in_off < 16; ++in_off) {
      for (int out_off : {-1, 0, static_cast<int>(in_off)}) {
        const std::string got = RunAt(
            [&](const uint8_t* i, uint8_t* o) {
              GetParam()->ctr32_encrypt_blocks(k.rk_enc, cbp, i, o, n);
            },
            in, in_off, out_off);
        ASSERT_EQ(BytesToHex(got), BytesToHex(want))
            << "blocks " << n << " in offset " << in_off << " out offset " << out_off;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, Sm4BackendTest,
                         ::testing::ValuesIn(Sm4AllKernelsForTesting()),
                         [](const ::testing::TestParamInfo<const Sm4Kernels*>& info) {
                           return std::string(info.param->name);
                         });

TEST(Sm4DispatchTest, ActiveIsFirstCapableInPriorityOrder) {
  const uint32_t features = GetCpuFeatures();
  const Sm4Kernels* expected = nullptr;
  for (const auto& c : Sm4DispatchTableForTesting()) {
    if (c.capable(features, GetCpuIdentity())) {
      expected = c.kernels;
      break;
    }
  }
  ASSERT_NE(expected, nullptr);
  EXPECT_STREQ(Sm4ActiveKernels().name, expected->name);
  EXPECT_STREQ(internal::Sm4ActiveKernelName(), expected->name);
  EXPECT_STREQ(Sm4AllKernelsForTesting().back()->name, "generic");
  EXPECT_EQ(Sm4AllKernelsForTesting().back()->required_features, 0u);
}

TEST(Sm4DispatchTest, CapableImpliesRequiredFeatures) {
  testing::ExpectPredicatesNeedFeatures(Sm4DispatchTableForTesting());
}

}  // namespace
}  // namespace smcrypt
