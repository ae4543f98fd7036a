#include "crypto/common/readable_count.h"

#include <bit>

#include "absl/strings/str_cat.h"

namespace smcrypt {

std::string ReadableCount(uint64_t n) {
  constexpr uint64_t kMaxOffset = uint64_t{1} << 16;
  if (n < (uint64_t{1} << 32)) return absl::StrCat(n);
  // 2^(k-1) ≤ n < 2^k, k from 33 to 64; `above` is n − 2^(k−1), `below` is 2^k − n
  // (computed mod 2^64, so k = 64 needs no special case).
  const int k = std::bit_width(n);
  const uint64_t above = n - (uint64_t{1} << (k - 1));
  const uint64_t below = (k == 64 ? uint64_t{0} : uint64_t{1} << k) - n;
  if (above == 0) return absl::StrCat("2^", k - 1);
  if (below <= above && below <= kMaxOffset) return absl::StrCat("2^", k, " - ", below);
  if (above <= kMaxOffset) return absl::StrCat("2^", k - 1, " + ", above);
  return absl::StrCat(n);
}

}  // namespace smcrypt
