#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "smcrypt/cpu.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

TEST(CpuFeaturesTest, ParsesEveryNameAndRoundTrips) {
  uint32_t all = 0;
  for (int i = 0; i < kNumCpuFeatures; ++i) {
    absl::string_view name = CpuFeatureName(1u << i);
    ASSERT_FALSE(name.empty()) << "feature bit " << i;
    auto bits = ParseCpuFeatureList(name);
    ASSERT_THAT(bits, IsOk());
    EXPECT_EQ(*bits, 1u << i);
    all |= 1u << i;
  }
  auto parsed = ParseCpuFeatureList(FormatCpuFeatureList(all));
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(*parsed, all);
}

TEST(CpuFeaturesTest, ListSyntax) {
  auto bits = ParseCpuFeatureList(" GFNI , avx512,,vaes ");
  ASSERT_THAT(bits, IsOk());
  EXPECT_EQ(*bits, kCpuGfni | kCpuAvx512 | kCpuVaes);
  auto empty = ParseCpuFeatureList("");
  ASSERT_THAT(empty, IsOk());
  EXPECT_EQ(*empty, 0u);
}

TEST(CpuFeaturesTest, UnknownNameIsAnError) {
  EXPECT_THAT(ParseCpuFeatureList("avx2,sse9"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"sse9\"")));
}

TEST(CpuFeaturesTest, MaskedFeaturesAreASubsetOfDetected) {
  const uint32_t detected = DetectCpuFeatures();
  const uint32_t active = GetCpuFeatures();
  EXPECT_EQ(active & ~detected, 0u);
  // Implications every detector must respect.
  if (active & kCpuAvx512) { EXPECT_TRUE(active & kCpuAvx2); }
  if (active & kCpuAvx2) { EXPECT_TRUE(active & kCpuAvx); }
  if (active & kCpuIfma) { EXPECT_TRUE(active & kCpuAvx512); }
  std::printf("detected: %s\nactive:   %s\n", FormatCpuFeatureList(detected).c_str(),
              FormatCpuFeatureList(active).c_str());
}

TEST(CpuFeaturesTest, SetCpuDisableAfterFirstUseFails) {
  (void)GetCpuFeatures();
  EXPECT_THAT(SetCpuDisable("gfni"), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(SetCpuDisable("nonsense"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace smcrypt

namespace smcrypt {
namespace {

// Run by ctest a second time with SMCRYPT_CPU_DISABLE set (tests/CMakeLists.txt,
// cpu_test_masked): every named feature must be hidden, and dispatch must still work.
TEST(CpuFeaturesTest, EnvironmentMaskIsApplied) {
  const char* env = std::getenv("SMCRYPT_CPU_DISABLE");
  if (env == nullptr) GTEST_SKIP() << "SMCRYPT_CPU_DISABLE not set (run as cpu_test_masked)";
  ASSERT_THAT(CpuFeatureEnvStatus(), IsOk());
  auto mask = ParseCpuFeatureList(env);
  ASSERT_THAT(mask, IsOk());
  EXPECT_EQ(GetCpuFeatures() & *mask, 0u) << "hidden: " << env;
  EXPECT_EQ(GetCpuFeatures(), DetectCpuFeatures() & ~*mask);
  for (const KernelChoice& k : ActiveKernels()) {
    std::printf("%s -> %s\n", k.algorithm.c_str(), k.kernel.c_str());
    EXPECT_FALSE(k.kernel.empty());
  }
}

TEST(CpuFeaturesTest, UnknownEnvironmentNameIsReported) {
  const char* env = std::getenv("SMCRYPT_CPU_DISABLE");
  if (env == nullptr || ParseCpuFeatureList(env).ok()) {
    GTEST_SKIP() << "needs SMCRYPT_CPU_DISABLE with an unknown name (cpu_test_bad_mask)";
  }
  EXPECT_THAT(CpuFeatureEnvStatus(), StatusIs(absl::StatusCode::kInvalidArgument));
  // The valid names in the list are still hidden.
  EXPECT_EQ(GetCpuFeatures() & kCpuGfni, 0u);
}

// The identity read from CPUID agrees with the kernel's reading of the same leaves
// (/proc/cpuinfo "vendor_id", "cpu family", "model": the display family and model).
TEST(CpuIdentityTest, MatchesProcCpuinfo) {
  const CpuIdentity& id = GetCpuIdentity();
#if !defined(__x86_64__)
  EXPECT_EQ(id.vendor, "");
  EXPECT_EQ(FormatCpuIdentity(id), "unknown");
  GTEST_SKIP() << "CPUID identity is x86-64 only";
#endif
  std::ifstream f("/proc/cpuinfo");
  if (!f) GTEST_SKIP() << "no /proc/cpuinfo";
  std::string line, vendor;
  int family = -1, model = -1;
  while (std::getline(f, line) && (vendor.empty() || family < 0 || model < 0)) {
    const absl::string_view text(line);  // key and value point into `line`
    const size_t colon = text.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view key = absl::StripAsciiWhitespace(text.substr(0, colon));
    const absl::string_view value = absl::StripAsciiWhitespace(text.substr(colon + 1));
    if (key == "vendor_id") vendor = std::string(value);
    if (key == "cpu family") ASSERT_TRUE(absl::SimpleAtoi(value, &family)) << line;
    if (key == "model") ASSERT_TRUE(absl::SimpleAtoi(value, &model)) << line;
  }
  ASSERT_FALSE(vendor.empty());
  EXPECT_EQ(id.vendor, vendor);
  EXPECT_EQ(static_cast<int>(id.family), family);
  EXPECT_EQ(static_cast<int>(id.model), model);
  EXPECT_EQ(id.IsAmd(), vendor == "AuthenticAMD");
  EXPECT_EQ(id.IsIntel(), vendor == "GenuineIntel");
  EXPECT_EQ(FormatCpuIdentity(id), absl::StrCat(vendor, " family ", family, " model ", model));
}

}  // namespace
}  // namespace smcrypt
