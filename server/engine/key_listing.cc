#include "server/engine/key_listing.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "server/engine/error_reason.h"

namespace smcrypt::server {
namespace {

// A page token is kTokenPrefix and the last key_id of its page in unpadded web-safe
// base64: opaque to clients, checkable by any replica without shared state.
constexpr absl::string_view kTokenPrefix = "k1.";

std::string PageToken(absl::string_view last_key_id) {
  return absl::StrCat(kTokenPrefix, absl::WebSafeBase64Escape(last_key_id));
}

absl::Status BadField(absl::string_view field, std::string message) {
  return WithReason(absl::InvalidArgumentError(std::move(message)), "INVALID_ARGUMENT",
                    {{"field", field}});
}

// LastKeyId decodes `token`: the key_id its page ended with.
absl::StatusOr<std::string> LastKeyId(absl::string_view token) {
  std::string id;
  absl::string_view body = token;
  if (!absl::ConsumePrefix(&body, kTokenPrefix) || body.empty() ||
      !absl::WebSafeBase64Unescape(body, &id) || !IsValidKeyId(id) || PageToken(id) != token) {
    // Not echoed: it may be long or hold any bytes.
    return BadField("page_token",
                    absl::StrCat("page_token (", token.size(),
                                 " bytes) is not a next_page_token of ListKeys; send an "
                                 "empty page_token for the first page"));
  }
  return id;
}

KeyListing Describe(const KeyStore& keys, const std::string& id) {
  KeyListing out;
  out.key_id = id;
  out.primary_version = keys.PrimaryVersion(id);
  out.min_version = keys.MinVersion(id);
  for (const StoredKey* e : keys.AllVersions(id)) {
    out.family = e->family;
    KeyVersionListing v;
    v.version = e->version;
    v.load_time = e->load_time;
    v.public_key_sha256 = e->is_symmetric ? "" : e->public_key_sha256;
    v.retired = e->version < out.min_version;
    v.has_private_key = e->is_private;
    out.versions.push_back(std::move(v));
  }
  for (Algorithm alg : AllAlgorithms()) {
    if (FamilyServes(out.family, alg)) out.algorithms.push_back(alg);
  }
  return out;
}

}  // namespace

absl::StatusOr<KeyPage> ListKeyPage(const KeyStore& keys, uint32_t page_size,
                                    absl::string_view page_token) {
  if (page_size > kMaxKeyPageSize) {
    return BadField("page_size", absl::StrCat("page_size must be 0 (", kDefaultKeyPageSize,
                                              ") to ", kMaxKeyPageSize, ", got ", page_size));
  }
  if (page_size == 0) page_size = kDefaultKeyPageSize;
  const std::vector<std::string>& ids = keys.key_ids();
  auto it = ids.begin();
  if (!page_token.empty()) {
    absl::StatusOr<std::string> last = LastKeyId(page_token);
    if (!last.ok()) return last.status();
    it = std::upper_bound(ids.begin(), ids.end(), *last);
  }
  KeyPage page;
  page.keyring_load_time = keys.load_time();
  for (; it != ids.end() && page.keys.size() < page_size; ++it) {
    page.keys.push_back(Describe(keys, *it));
  }
  if (it != ids.end()) page.next_page_token = PageToken(page.keys.back().key_id);
  return page;
}

}  // namespace smcrypt::server
