// sm3.h — the SM3 hash function (GB/T 32905-2016), HMAC-SM3 (RFC 2104 over SM3), batches.
#ifndef SMCRYPT_SM3_H_
#define SMCRYPT_SM3_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "smcrypt/primitives/hash.h"

namespace smcrypt {

inline constexpr size_t kSm3DigestSize = 32;  // bytes
inline constexpr size_t kSm3BlockSize = 64;   // bytes

// Sm3 is one incremental SM3 computation (GB/T 32905-2016 §5: padding §5.2, iteration
// §5.3, CF §5.3.3). It runs on the back end that dispatch chose for SM3. Any split of the
// input into Update calls gives the same digest. Messages up to 2^64 − 1 bits.
// Not thread-safe; cheap to copy (copying forks the computation, e.g. for HMAC midstates).
class Sm3 final : public Hash {
 public:
  Sm3() { Reset(); }
  Sm3(const Sm3&) = default;
  Sm3& operator=(const Sm3&) = default;
  // The destructor wipes the chaining state and the buffered input.
  ~Sm3() override;
  void Update(absl::string_view data) override;
  void Update(const uint8_t* data, size_t len);
  // Finish returns the 32-byte digest and resets to the empty-message state.
  std::string Finish() override;
  // FinishTo writes the 32-byte digest to `out` and resets.
  void FinishTo(uint8_t out[kSm3DigestSize]);
  void Reset();
  size_t digest_size() const override { return kSm3DigestSize; }
  size_t block_size() const override { return kSm3BlockSize; }

 private:
  uint32_t state_[8];
  uint8_t buffer_[kSm3BlockSize];
  size_t buffer_len_;
  uint64_t total_len_;  // bytes
};

// Sm3Digest returns SM3(`data`), 32 bytes.
std::array<uint8_t, kSm3DigestSize> Sm3Digest(absl::string_view data);

// Sm3Batch hashes `messages[i]` into `out[32*i .. 32*i+31]` for every i. `out` must hold
// 32 × messages.size() bytes and not overlap any message. Messages may differ in length
// and be empty. Multi-buffer back ends serve this call; results equal Sm3Digest's.
void Sm3Batch(absl::Span<const absl::string_view> messages, uint8_t* out);

// HmacSm3 is HMAC (RFC 2104) over SM3: a 32-byte MAC. Keys of any length (longer than
// 64 bytes are hashed first, as RFC 2104 §2 says). The key's inner and outer midstates
// are computed once at construction and the key is wiped, so each MAC skips the two
// key-block compressions. Constant-time VerifyMac.
class HmacSm3;
namespace internal {
// Defined in crypto/sm3/sm3.cc; declared for callers in crypto/sm3/sm3_internal.h.
void HmacSm3Batch(const HmacSm3* const* keys, const absl::string_view* messages,
                  size_t num_messages, uint8_t* out);
}  // namespace internal

class HmacSm3 final : public Mac {
 public:
  // New takes a key of any length, the empty key included (RFC 2104 §2 sets no lower
  // bound), and does not fail.
  static absl::StatusOr<std::unique_ptr<HmacSm3>> New(absl::string_view key);
  ~HmacSm3() override;
  absl::StatusOr<std::string> ComputeMac(absl::string_view data) const override;
  absl::Status VerifyMac(absl::string_view mac, absl::string_view data) const override;
  size_t mac_size() const override { return kSm3DigestSize; }

 private:
  friend void internal::HmacSm3Batch(const HmacSm3* const*, const absl::string_view*, size_t,
                                     uint8_t*);
  HmacSm3() = default;
  void ComputeMacTo(absl::string_view data, uint8_t out[kSm3DigestSize]) const;
  uint32_t inner_[8];  // CF chaining value after the block key ⊕ ipad; wiped by ~HmacSm3
  uint32_t outer_[8];  // CF chaining value after the block key ⊕ opad; wiped by ~HmacSm3
};

}  // namespace smcrypt

#endif  // SMCRYPT_SM3_H_
