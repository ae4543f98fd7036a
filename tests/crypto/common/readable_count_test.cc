// ReadableCount: limits in error messages as a person reads them.
#include "crypto/common/readable_count.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace smcrypt {
namespace {

constexpr uint64_t Pow2(int k) { return uint64_t{1} << k; }

TEST(ReadableCountTest, DecimalBelow2To32) {
  EXPECT_EQ(ReadableCount(0), "0");
  EXPECT_EQ(ReadableCount(16), "16");
  EXPECT_EQ(ReadableCount(65535), "65535");
  EXPECT_EQ(ReadableCount(1048576), "1048576");
  EXPECT_EQ(ReadableCount(Pow2(32) - 1), "4294967295");
}

TEST(ReadableCountTest, PowersOfTwoAndSmallOffsetsFrom2To32) {
  EXPECT_EQ(ReadableCount(Pow2(32)), "2^32");
  EXPECT_EQ(ReadableCount(Pow2(36) - 32), "2^36 - 32");        // GCM plaintext (SP 800-38D)
  EXPECT_EQ(ReadableCount(Pow2(36) - 16), "2^36 - 16");        // and with a 16-byte tag
  EXPECT_EQ(ReadableCount(Pow2(37) - 32), "2^37 - 32");        // SM2: (2^32 − 1) × 32
  EXPECT_EQ(ReadableCount(Pow2(61) - 1), "2^61 - 1");          // GCM nonce and aad
  EXPECT_EQ(ReadableCount(Pow2(40) + 5), "2^40 + 5");
  EXPECT_EQ(ReadableCount(Pow2(63)), "2^63");
  EXPECT_EQ(ReadableCount(UINT64_MAX), "2^64 - 1");
  EXPECT_EQ(ReadableCount(Pow2(33) - 65536), "2^33 - 65536");
  EXPECT_EQ(ReadableCount(Pow2(33) + 65536), "2^33 + 65536");
}

TEST(ReadableCountTest, OtherLargeValuesStayDecimal) {
  EXPECT_EQ(ReadableCount(Pow2(33) - 65537), "8589869055");
  EXPECT_EQ(ReadableCount(123456789012), "123456789012");
  EXPECT_EQ(ReadableCount(3 * Pow2(40)), "3298534883328");
}

}  // namespace
}  // namespace smcrypt
