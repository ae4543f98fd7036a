// hash.h — incremental hash functions and MACs (SM3, SHA-256, HMAC-SM3, HMAC-SHA-256).
#ifndef SMCRYPT_PRIMITIVES_HASH_H_
#define SMCRYPT_PRIMITIVES_HASH_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace smcrypt {

// Hash is one incremental hash computation. Any split of the input into Update calls
// gives the same digest as one call. Finish returns the digest (digest_size() bytes)
// and resets the object to the empty-message state, so it can be reused.
//
// Thread safety: not thread-safe; use one object per thread.
class Hash {
 public:
  virtual ~Hash() = default;
  virtual void Update(absl::string_view data) = 0;
  virtual std::string Finish() = 0;
  virtual size_t digest_size() const = 0;
  virtual size_t block_size() const = 0;
};

// Mac computes and verifies message authentication codes under one key (Tink's Mac).
// VerifyMac compares in constant time and returns OK only for a correct MAC; a wrong one
// is InvalidArgument "MAC verification failed".
//
// Thread safety: const methods, safe to call concurrently on one object.
class Mac {
 public:
  virtual ~Mac() = default;
  virtual absl::StatusOr<std::string> ComputeMac(absl::string_view data) const = 0;
  virtual absl::Status VerifyMac(absl::string_view mac, absl::string_view data) const = 0;
  virtual size_t mac_size() const = 0;
};

}  // namespace smcrypt

#endif  // SMCRYPT_PRIMITIVES_HASH_H_
