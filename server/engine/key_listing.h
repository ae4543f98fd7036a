// key_listing.h — the pages of ListKeys (crypto.proto, "Key management"): what a
// replica has loaded, described without secret material.
#ifndef SMCRYPT_SERVER_KEY_LISTING_H_
#define SMCRYPT_SERVER_KEY_LISTING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/engine/key_store.h"
#include "smcrypt/algorithm.h"

namespace smcrypt::server {

// KeyVersionListing: one loaded version of a key. `public_key_sha256` is the 32-byte
// SHA-256 of an asymmetric key's SubjectPublicKeyInfo, empty for symmetric keys.
struct KeyVersionListing {
  uint32_t version = 0;
  absl::Time load_time;
  std::string public_key_sha256;
  bool retired = false;          // below the key's minimum version
  bool has_private_key = false;  // a PRIVATE KEY file
};

// KeyListing: one key; `algorithms` those its family serves (FamilyServes), in
// AllAlgorithms() order; `versions` every loaded version, oldest first.
struct KeyListing {
  std::string key_id;
  KeyFamily family;
  std::vector<Algorithm> algorithms;
  std::vector<KeyVersionListing> versions;
  uint32_t primary_version = 0;
  uint32_t min_version = 1;
};

// KeyPage: a page of keys in key_id byte order; `next_page_token` empty on the last page;
// `keyring_load_time` the store's load_time().
struct KeyPage {
  std::vector<KeyListing> keys;
  std::string next_page_token;
  absl::Time keyring_load_time;
};

// kDefaultKeyPageSize / kMaxKeyPageSize: a page_size of 0 lists kDefaultKeyPageSize
// keys; more than kMaxKeyPageSize is refused.
inline constexpr uint32_t kDefaultKeyPageSize = 100;
inline constexpr uint32_t kMaxKeyPageSize = 1000;

// ListKeyPage lists up to `page_size` keys of `keys` after the page `page_token` ends
// (empty: from the first key). A token names the last key_id of its page, so it stays
// valid when a reload adds or removes keys. Errors: InvalidArgument (reason
// INVALID_ARGUMENT, metadata `field`) for a page_size above kMaxKeyPageSize or a
// page_token that ListKeyPage did not make.
absl::StatusOr<KeyPage> ListKeyPage(const KeyStore& keys, uint32_t page_size,
                                    absl::string_view page_token);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_KEY_LISTING_H_
