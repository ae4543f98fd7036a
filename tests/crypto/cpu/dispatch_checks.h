// dispatch_checks.h — checks every algorithm's dispatch table must pass
// (crypto/cpu/backends.h): no capability predicate holds without its back end's features,
// on this CPU's identity or on the others dispatch may meet, and the last entry needs
// nothing, so dispatch always finds a back end.
#ifndef SMCRYPT_TESTS_CRYPTO_CPU_DISPATCH_CHECKS_H_
#define SMCRYPT_TESTS_CRYPTO_CPU_DISPATCH_CHECKS_H_

#include <gtest/gtest.h>

#include <cstdint>

#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "smcrypt/cpu.h"

namespace smcrypt::testing {

template <typename Kernels>
void ExpectPredicatesNeedFeatures(absl::Span<const internal::BackendChoice<Kernels>> table) {
  const CpuIdentity cpus[] = {GetCpuIdentity(), {"GenuineIntel", 6, 207},
                              {"AuthenticAMD", 25, 17}, {"AuthenticAMD", 26, 2}};
  ASSERT_FALSE(table.empty());
  for (const auto& c : table) {
    for (const CpuIdentity& cpu : cpus) {
      for (uint32_t base : {GetCpuFeatures(), ~0u}) {
        for (int bit = 0; bit < kNumCpuFeatures; ++bit) {
          const uint32_t f = 1u << bit;
          if ((c.kernels->required_features & f) == 0) continue;
          EXPECT_FALSE(c.capable(base & ~f, cpu))
              << c.kernels->name << " without " << CpuFeatureName(f);
        }
      }
    }
  }
  const auto& last = table.back();
  EXPECT_STREQ(last.kernels->name, "generic");
  EXPECT_EQ(last.kernels->required_features, 0u);
  for (const CpuIdentity& cpu : cpus) EXPECT_TRUE(last.capable(0, cpu));
}

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_CRYPTO_CPU_DISPATCH_CHECKS_H_
