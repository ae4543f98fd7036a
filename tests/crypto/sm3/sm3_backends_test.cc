// sm3_backends_test.cc — every compiled SM3 back end against generic, the standard and
// OpenSSL (single-stream compress, multi-buffer jobs with lane refill, the public API
// and the KDF through the testing override), and the dispatch choice for this CPU
// (docs/contributing.md, house style 19–20).
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "crypto/cpu/backends.h"
#include "crypto/sm3/sm3_internal.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm3.h"
#include "tests/crypto/cpu/dispatch_checks.h"
#include "tests/testing/status_matchers.h"
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

// --- Multi-buffer jobs, the public API through the override, the KDF ---------------

bool IsMultiBuffer(const Sm3Kernels& k) { return k.hash_jobs != nullptr; }

std::string Hex32(const uint8_t* p) {
  return BytesToHex(absl::string_view(reinterpret_cast<const char*>(p), 32));
}

// ReferenceJobDigest hashes a job with generic: its state, then data, padded for
// prefix_len + len bytes.
std::string ReferenceJobDigest(const Sm3Job& job) {
  Sm3Job copy = job;
  uint8_t out[32];
  copy.out = out;
  Sm3HashJobsSerial(GenericKernels(), &copy, 1);
  return Hex32(out);
}

void PrintSeed(uint64_t seed) {
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
}

TEST_P(Sm3BackendTest, HashJobsEveryLengthInOneQueue) {
  if (!IsMultiBuffer(*GetParam())) GTEST_SKIP() << GetParam()->name << " is single-stream";
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  PrintSeed(seed);
  std::mt19937_64 rng(seed + 5);
  const std::string data = RandomBytes(rng, 1024 + 16);
  // Every length 0..1024 (each message at its own offset), in increasing and in
  // shuffled order, so lanes finish at different times and are refilled; half of the
  // jobs start from a random midstate after 64 or 128 bytes.
  std::vector<size_t> order(1025);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) std::shuffle(order.begin(), order.end(), rng);
    std::vector<Sm3Job> jobs(order.size());
    std::vector<uint8_t> out(32 * jobs.size() + 1, 0xcc);
    for (size_t i = 0; i < jobs.size(); ++i) {
      const size_t len = order[i];
      if (i % 2 == 0) {
        std::copy(std::begin(kSm3Iv), std::end(kSm3Iv), jobs[i].state);
        jobs[i].prefix_len = 0;
      } else {
        for (uint32_t& w : jobs[i].state) w = static_cast<uint32_t>(rng());
        jobs[i].prefix_len = 64 * (1 + i % 2);
      }
      jobs[i].data = reinterpret_cast<const uint8_t*>(data.data()) + 1 + len % 15;
      jobs[i].len = len;
      jobs[i].out = &out[32 * i];
    }
    GetParam()->hash_jobs(jobs.data(), jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      ASSERT_EQ(Hex32(&out[32 * i]), ReferenceJobDigest(jobs[i]))
          << "pass " << pass << " job " << i << " len " << jobs[i].len;
    }
    ASSERT_EQ(out.back(), 0xcc) << "wrote past the end";
  }
}

TEST_P(Sm3BackendTest, BatchShapes) {
  if (!IsMultiBuffer(*GetParam())) GTEST_SKIP() << GetParam()->name << " is single-stream";
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  PrintSeed(seed);
  std::mt19937_64 rng(seed + 6);
  const size_t lanes = GetParam()->lanes;
  struct Shape {
    const char* name;
    std::vector<size_t> lens;
  };
  std::vector<Shape> shapes = {
      {"one lane", {100}},
      {"one empty message", {0}},
      {"all empty", std::vector<size_t>(lanes + 3, 0)},
      {"exactly the lanes", std::vector<size_t>(lanes, 64)},
      {"three times the lanes plus one", std::vector<size_t>(3 * lanes + 1, 200)},
      {"one long among short ones", {}},
      {"random large", {}},
      {"GB/T 32905 examples", {}},
  };
  for (size_t i = 0; i < 2 * lanes; ++i) shapes[5].lens.push_back(i == 3 ? 20000 : i % 7);
  for (int i = 0; i < 2 * static_cast<int>(lanes) + 1; ++i) {
    shapes[6].lens.push_back(50000 + rng() % 150000);
  }
  for (const Shape& shape : shapes) {
    SCOPED_TRACE(shape.name);
    std::vector<std::string> storage;
    if (std::string(shape.name) == "GB/T 32905 examples") {
      std::string abcd16;
      for (int i = 0; i < 16; ++i) abcd16 += "abcd";
      for (size_t i = 0; i < lanes + 1; ++i) storage.push_back(i % 2 == 0 ? "abc" : abcd16);
    } else {
      for (size_t len : shape.lens) storage.push_back(RandomBytes(rng, len));
    }
    std::vector<absl::string_view> msgs(storage.begin(), storage.end());
    std::vector<uint8_t> out(32 * msgs.size() + 1, 0xcc);
    GetParam()->batch(msgs.data(), msgs.size(), out.data());
    for (size_t i = 0; i < msgs.size(); ++i) {
      ASSERT_EQ(Hex32(&out[32 * i]), BytesToHex(Digest(GenericKernels(), msgs[i])))
          << "message " << i << " len " << msgs[i].size();
    }
    ASSERT_EQ(out.back(), 0xcc);
    if (std::string(shape.name) == "GB/T 32905 examples") {
      EXPECT_EQ(Hex32(&out[0]), BytesToHex(HexToBytes("66c7f0f462eeedd9d1f2d46bdc10e4e2"
                                                      "4167c4875cf2f7a2297da02b8f4ba8e0")));
      EXPECT_EQ(Hex32(&out[32]), BytesToHex(HexToBytes("debe9ff92275b8a138604889c18e5a4d"
                                                       "6fdb70e5387e5765293dcba39c0c5732")));
    }
  }
}

TEST_P(Sm3BackendTest, LargeRandomMessagesMatchGeneric) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  PrintSeed(seed);
  std::mt19937_64 rng(seed + 7);
  for (int i = 0; i < 4; ++i) {
    const std::string m = RandomBytes(rng, 20000 + rng() % 200000);
    ASSERT_EQ(BytesToHex(Digest(*GetParam(), m)), BytesToHex(Digest(GenericKernels(), m)))
        << "len " << m.size();
  }
}

std::string OpenSslSm3(absl::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  EXPECT_EQ(EVP_Digest(data.data(), data.size(), md, &md_len, EVP_sm3(), nullptr), 1);
  return std::string(reinterpret_cast<const char*>(md), md_len);
}

// OpenSslKdf is ANSI X9.63's KDF with SM3 and no SharedInfo, which is exactly the KDF of
// GB/T 32918.4 §5.4.3 (SM3(Z ‖ ct), ct a 32-bit big-endian counter from 1).
std::string OpenSslKdf(absl::string_view z, size_t out_len) {
  std::string out(out_len, '\0');
  if (out_len == 0) return out;
  if (z.empty()) {  // OpenSSL's X963KDF refuses an empty secret: SM3(ct_i) one by one.
    std::string t;
    for (uint32_t ct = 1; t.size() < out_len; ++ct) {
      const char c[4] = {static_cast<char>(ct >> 24), static_cast<char>(ct >> 16),
                         static_cast<char>(ct >> 8), static_cast<char>(ct)};
      t += OpenSslSm3(absl::string_view(c, 4));
    }
    return t.substr(0, out_len);
  }
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "X963KDF", nullptr);
  EXPECT_NE(kdf, nullptr);
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  char digest[] = "SM3";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(z.data()),
                                        z.size()),
      OSSL_PARAM_construct_end(),
  };
  EXPECT_EQ(EVP_KDF_derive(ctx, reinterpret_cast<unsigned char*>(out.data()), out_len, params),
            1);
  EVP_KDF_CTX_free(ctx);
  EVP_KDF_free(kdf);
  return out;
}

// UseKernels installs a back end through the testing override for one scope.
class UseKernels {
 public:
  explicit UseKernels(const Sm3Kernels* k) { Sm3SetKernelsForTesting(k); }
  ~UseKernels() { Sm3SetKernelsForTesting(nullptr); }
};

TEST_P(Sm3BackendTest, PublicApiThroughOverride) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  PrintSeed(seed);
  std::mt19937_64 rng(seed + 8);
  UseKernels use(GetParam());
  ASSERT_EQ(&Sm3ActiveKernels(), GetParam());
  // One-shot and incremental.
  for (size_t len : {0, 3, 55, 56, 63, 64, 65, 127, 128, 1000, 5000}) {
    const std::string m = RandomBytes(rng, len);
    const auto d = Sm3Digest(m);
    ASSERT_EQ(Hex32(d.data()), BytesToHex(OpenSslSm3(m))) << "len " << len;
    Sm3 h;
    h.Update(absl::string_view(m).substr(0, len / 3));
    h.Update(absl::string_view(m).substr(len / 3));
    ASSERT_EQ(BytesToHex(h.Finish()), BytesToHex(OpenSslSm3(m))) << "len " << len;
  }
  // Sm3Batch with mixed lengths, empty messages included, more messages than lanes.
  std::vector<std::string> storage;
  for (int i = 0; i < 37; ++i) storage.push_back(RandomBytes(rng, i % 5 == 0 ? 0 : rng() % 3000));
  std::vector<absl::string_view> msgs(storage.begin(), storage.end());
  std::vector<uint8_t> out(32 * msgs.size());
  Sm3Batch(msgs, out.data());
  for (size_t i = 0; i < msgs.size(); ++i) {
    ASSERT_EQ(Hex32(&out[32 * i]), BytesToHex(OpenSslSm3(msgs[i]))) << "message " << i;
  }
  // HMAC-SM3 against OpenSSL, short and long keys.
  for (size_t key_len : {1, 32, 64, 65, 200}) {
    const std::string key = RandomBytes(rng, key_len);
    const std::string m = RandomBytes(rng, rng() % 2000);
    ASSERT_OK_AND_ASSIGN(auto mac, HmacSm3::New(key));
    ASSERT_OK_AND_ASSIGN(std::string tag, mac->ComputeMac(m));
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    ASSERT_NE(HMAC(EVP_sm3(), key.data(), static_cast<int>(key.size()),
                   reinterpret_cast<const unsigned char*>(m.data()), m.size(), md, &md_len),
              nullptr);
    ASSERT_EQ(BytesToHex(tag),
              BytesToHex(absl::string_view(reinterpret_cast<char*>(md), md_len)))
        << "key_len " << key_len;
  }
}

TEST_P(Sm3BackendTest, HmacBatchOverManyKeysMatchesOpenSsl) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  PrintSeed(seed);
  std::mt19937_64 rng(seed + 11);
  UseKernels use(GetParam());
  // 7 keys (short, block-sized, longer than a block) over 45 messages of mixed lengths,
  // empty ones included: more messages than lanes, keys repeated.
  std::vector<std::string> key_bytes;
  std::vector<std::unique_ptr<HmacSm3>> macs;
  for (size_t key_len : {1, 16, 32, 63, 64, 65, 300}) {
    key_bytes.push_back(RandomBytes(rng, key_len));
    ASSERT_OK_AND_ASSIGN(auto mac, HmacSm3::New(key_bytes.back()));
    macs.push_back(std::move(mac));
  }
  std::vector<std::string> storage;
  std::vector<const HmacSm3*> keys;
  std::vector<size_t> key_index;
  for (int i = 0; i < 45; ++i) {
    storage.push_back(RandomBytes(rng, i % 9 == 0 ? 0 : rng() % 2500));
    key_index.push_back(rng() % macs.size());
    keys.push_back(macs[key_index.back()].get());
  }
  std::vector<absl::string_view> msgs(storage.begin(), storage.end());
  std::vector<uint8_t> out(32 * msgs.size() + 1, 0xcc);
  internal::HmacSm3Batch(keys.data(), msgs.data(), msgs.size(), out.data());
  for (size_t i = 0; i < msgs.size(); ++i) {
    const std::string& key = key_bytes[key_index[i]];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    ASSERT_NE(HMAC(EVP_sm3(), key.data(), static_cast<int>(key.size()),
                   reinterpret_cast<const unsigned char*>(msgs[i].data()), msgs[i].size(), md,
                   &md_len),
              nullptr);
    ASSERT_EQ(Hex32(&out[32 * i]), BytesToHex(absl::string_view(reinterpret_cast<char*>(md), 32)))
        << "message " << i << " len " << msgs[i].size();
    ASSERT_OK_AND_ASSIGN(std::string one, keys[i]->ComputeMac(msgs[i]));
    ASSERT_EQ(Hex32(&out[32 * i]), BytesToHex(one));
  }
  ASSERT_EQ(out.back(), 0xcc);
}

TEST_P(Sm3BackendTest, KdfMatchesOpenSslX963) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  PrintSeed(seed);
  std::mt19937_64 rng(seed + 9);
  UseKernels use(GetParam());
  for (size_t z_len : {64, 0, 1, 59, 60, 63, 65, 128, 200}) {
    const std::string z = RandomBytes(rng, z_len);
    const std::string want = OpenSslKdf(z, 2100);
    for (size_t out_len : {size_t{0}, size_t{1}, size_t{31}, size_t{32}, size_t{33}, size_t{64},
                           size_t{100}, size_t{512}, size_t{1024}, size_t{2047}, size_t{2100},
                           static_cast<size_t>(rng() % 2100)}) {
      SCOPED_TRACE(::testing::Message() << "z_len " << z_len << " out_len " << out_len);
      // Plain output.
      std::vector<uint8_t> t(out_len + 1, 0xcc);
      const uint64_t zero = Sm3Kdf(reinterpret_cast<const uint8_t*>(z.data()), z.size(),
                                   nullptr, t.data(), out_len);
      EXPECT_EQ(zero, 0u);
      ASSERT_EQ(BytesToHex(absl::string_view(reinterpret_cast<char*>(t.data()), out_len)),
                BytesToHex(want.substr(0, out_len)));
      ASSERT_EQ(t.back(), 0xcc);
      // XOR into a message, in place.
      const std::string m = RandomBytes(rng, out_len);
      std::vector<uint8_t> c(m.begin(), m.end());
      Sm3Kdf(reinterpret_cast<const uint8_t*>(z.data()), z.size(), c.data(), c.data(), out_len);
      for (size_t i = 0; i < out_len; ++i) {
        ASSERT_EQ(c[i], static_cast<uint8_t>(m[i] ^ want[i])) << "byte " << i;
      }
    }
  }
}

TEST(Sm3KdfTest, SerialAndLaneParallelAgree) {
  // The active back end (lanes if this CPU has a multi-buffer back end) against generic.
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  PrintSeed(seed);
  std::mt19937_64 rng(seed + 10);
  const std::string z = RandomBytes(rng, 64);
  for (size_t out_len = 0; out_len <= 1100; out_len += 1 + out_len / 8) {
    std::vector<uint8_t> fast(out_len), slow(out_len);
    Sm3Kdf(reinterpret_cast<const uint8_t*>(z.data()), z.size(), nullptr, fast.data(), out_len);
    {
      UseKernels use(&GenericKernels());
      Sm3Kdf(reinterpret_cast<const uint8_t*>(z.data()), z.size(), nullptr, slow.data(),
             out_len);
    }
    ASSERT_EQ(fast, slow) << "out_len " << out_len;
  }
}

TEST(Sm3KdfTest, ZeroLengthReturnsZeroMask) {
  uint8_t z[64] = {};
  uint8_t sentinel = 0x5a;
  EXPECT_EQ(Sm3Kdf(z, sizeof(z), nullptr, &sentinel, 0), 0u);
  EXPECT_EQ(sentinel, 0x5a);
}

// --- Dispatch ---------------------------------------------------------------------

TEST(Sm3DispatchTest, FeatureMasksOfEachBackEnd) {
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    const std::string name = k->name;
    if (name == "generic") {
      EXPECT_EQ(k->required_features, 0u);
    } else if (name == "avx_bmi2") {
      // BMI1/BMI2 and AVX, not AVX2 (an AVX2 CPU need not have BMI2).
      EXPECT_EQ(k->required_features, uint32_t{kCpuAvx | kCpuBmi2});
    } else if (name == "mb16_avx512") {
      EXPECT_EQ(k->required_features, uint32_t{kCpuAvx512});
      EXPECT_EQ(k->lanes, 16u);
    } else if (name == "mb8_avx2") {
      EXPECT_EQ(k->required_features, uint32_t{kCpuAvx2});
      EXPECT_EQ(k->lanes, 8u);
    } else if (name == "mb4_neon") {
      EXPECT_EQ(k->required_features, uint32_t{kCpuAsimd});
      EXPECT_EQ(k->lanes, 4u);
    } else if (name == "ce") {
      EXPECT_EQ(k->required_features, uint32_t{kCpuSm3 | kCpuAsimd});
      EXPECT_EQ(k->lanes, 0u);
    } else {
      ADD_FAILURE() << "unexpected back end " << name;
    }
    EXPECT_NE(k->compress_blocks, nullptr) << name;
    EXPECT_EQ(k->hash_jobs != nullptr, k->lanes > 0) << name;
    EXPECT_EQ(k->batch != nullptr, k->lanes > 0) << name;
  }
}

TEST(Sm3DispatchTest, ActiveIsFirstCapableOfEachTable) {
  const uint32_t features = GetCpuFeatures();
  std::string single, multi;
  for (const auto& c : Sm3DispatchTableForTesting()) {
    if (!c.capable(features, GetCpuIdentity())) continue;
    if (c.kernels->lanes > 0 && multi.empty()) multi = c.kernels->name;
    if (c.kernels->lanes == 0 && single.empty()) single = c.kernels->name;
  }
  ASSERT_FALSE(single.empty());
  const std::string expected = multi.empty() ? single : single + "+" + multi;
  std::printf("CPU features %s: SM3 back end %s\n", FormatCpuFeatureList(features).c_str(),
              expected.c_str());
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    if (!internal::HasFeatures(features, k->required_features)) {
      std::printf("  skipped %s: lacks %s\n", k->name,
                  FormatCpuFeatureList(k->required_features & ~features).c_str());
    }
  }
  EXPECT_EQ(Sm3ActiveKernels().name, expected);
  EXPECT_EQ(internal::Sm3ActiveKernelName(), expected);
  EXPECT_EQ(Sm3ActiveKernels().lanes == 0, multi.empty());
  EXPECT_STREQ(Sm3AllKernelsForTesting().back()->name, "generic");
}

TEST(Sm3DispatchTest, CapableImpliesRequiredFeatures) {
  const auto table = Sm3DispatchTableForTesting();
  testing::ExpectPredicatesNeedFeatures<Sm3Kernels>(table);
}

TEST(Sm3DispatchTest, OverrideSwitchesAndRestores) {
  const std::string dispatched = Sm3ActiveKernels().name;
  Sm3SetKernelsForTesting(&GenericKernels());
  EXPECT_STREQ(Sm3ActiveKernels().name, "generic");
  EXPECT_EQ(internal::Sm3ActiveKernelName(), dispatched);  // still the dispatched choice
  Sm3SetKernelsForTesting(nullptr);
  EXPECT_EQ(Sm3ActiveKernels().name, dispatched);
}

}  // namespace
}  // namespace smcrypt
