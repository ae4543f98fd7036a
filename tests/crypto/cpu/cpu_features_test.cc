#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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

#if defined(__aarch64__)
// CpuinfoFeatures returns the names of /proc/cpuinfo's "Features" line (the kernel's
// HWCAP names), or nullopt when there is none (qemu user mode shows the host's file).
std::optional<std::vector<std::string>> CpuinfoFeatures() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    const absl::string_view text(line);
    const size_t colon = text.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::StripAsciiWhitespace(text.substr(0, colon)) != "Features") continue;
    return std::vector<std::string>(
        absl::StrSplit(absl::StripAsciiWhitespace(text.substr(colon + 1)), ' ', absl::SkipEmpty()));
  }
  return std::nullopt;
}

// The features read from getauxval(AT_HWCAP) agree with the kernel's own list, or (under
// qemu, where that list is the host's) with SMCRYPT_EXPECT_CPU_FEATURES, which the arm64
// cross build's ctest sets to what qemu -cpu max implements.
TEST(CpuFeaturesTest, Arm64DetectionMatchesTheKernelsList) {
  std::vector<std::string> names;
  if (const char* expect = std::getenv("SMCRYPT_EXPECT_CPU_FEATURES")) {
    names = absl::StrSplit(expect, ',', absl::SkipEmpty());
  } else if (auto listed = CpuinfoFeatures()) {
    names = *listed;
  } else {
    GTEST_SKIP() << "no Features line in /proc/cpuinfo and no SMCRYPT_EXPECT_CPU_FEATURES";
  }
  constexpr uint32_t kArm64 = kCpuAsimd | kCpuPmull | kCpuSha2 | kCpuSm3 | kCpuSm4 | kCpuSve;
  uint32_t expected = 0;
  for (const std::string& n : names) {
    auto bit = ParseCpuFeatureList(n);  // the kernel's names that smcrypt also uses
    if (bit.ok() && (*bit & kArm64) != 0) expected |= *bit;
  }
  EXPECT_EQ(FormatCpuFeatureList(DetectCpuFeatures()), FormatCpuFeatureList(expected));
}

// MIDR_EL1 from sysfs agrees with /proc/cpuinfo's "CPU implementer" and "CPU part".
TEST(CpuIdentityTest, MatchesProcCpuinfo) {
  const CpuIdentity& id = GetCpuIdentity();
  if (id.vendor.empty()) {
    EXPECT_EQ(FormatCpuIdentity(id), "unknown");
    GTEST_SKIP() << "no MIDR_EL1 in sysfs (qemu user mode or a container)";
  }
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  int implementer = -1, part = -1;
  while (std::getline(f, line) && (implementer < 0 || part < 0)) {
    const absl::string_view text(line);
    const size_t colon = text.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view key = absl::StripAsciiWhitespace(text.substr(0, colon));
    absl::string_view value = absl::StripAsciiWhitespace(text.substr(colon + 1));
    int* out = key == "CPU implementer" ? &implementer : key == "CPU part" ? &part : nullptr;
    if (out == nullptr) continue;
    ASSERT_TRUE(absl::ConsumePrefix(&value, "0x")) << line;
    ASSERT_TRUE(absl::SimpleHexAtoi(value, out)) << line;
  }
  ASSERT_GE(implementer, 0) << "sysfs has MIDR_EL1 but /proc/cpuinfo has no CPU implementer";
  EXPECT_EQ(static_cast<int>(id.family), implementer);
  EXPECT_EQ(static_cast<int>(id.model), part);
  EXPECT_THAT(FormatCpuIdentity(id), HasSubstr(" implementer 0x"));
}
#else
// The identity read from CPUID agrees with the kernel's reading of the same leaves
// (/proc/cpuinfo "vendor_id", "cpu family", "model": the display family and model).
TEST(CpuIdentityTest, MatchesProcCpuinfo) {
  const CpuIdentity& id = GetCpuIdentity();
#if !defined(__x86_64__)
  EXPECT_EQ(id.vendor, "");
  EXPECT_EQ(FormatCpuIdentity(id), "unknown");
  GTEST_SKIP() << "the CPU identity is read on x86-64 and arm64 only";
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

#endif  // defined(__aarch64__)

}  // namespace
}  // namespace smcrypt
