// truncated_mac.cc — VerifyTruncatedMac (smcrypt/registry.h), RFC 2104 §5 truncation.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "smcrypt/registry.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt {

absl::StatusOr<bool> VerifyTruncatedMac(const Mac& mac, absl::string_view data,
                                        absl::string_view expected) {
  // RFC 2104 §5: a tag may be truncated to its leftmost t bytes, t ≥ max(L/2, 10).
  const size_t full_size = mac.mac_size();
  const size_t min_size = std::max<size_t>(full_size / 2, 10);
  if (expected.size() < min_size || expected.size() > full_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected_mac must be ", min_size, " to ", full_size,
        " bytes (a tag truncated to its leftmost bytes, RFC 2104 §5), got ", expected.size()));
  }
  absl::StatusOr<std::string> tag = mac.ComputeMac(data);
  if (!tag.ok()) return tag.status();
  // The length is public; the leftmost expected.size() bytes are compared in constant time,
  // and only the verdict is declassified.
  const bool equal = CtDeclassify(CtMemEq(tag->data(), expected.data(), expected.size()));
  SecureZero(tag->data(), tag->size());
  return equal;
}

}  // namespace smcrypt
