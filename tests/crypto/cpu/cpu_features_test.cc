#include <gtest/gtest.h>

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
