// sm3.cc — SM3 (GB/T 32905-2016): padding and iteration (§5.2, §5.3), the incremental
// and one-shot APIs, Sm3Batch, and HMAC-SM3 (RFC 2104). The compression function comes
// from the back end that dispatch chose (sm3_dispatch.cc).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm3.h"

namespace smcrypt {
namespace {

// PadAndFinish writes the §5.2 padding for a message of `total_len` bytes whose last
// `tail_len` (< 64) bytes are at `tail`, compresses the final one or two blocks into
// `state` and stores the digest y = V^(n) big-endian into `out`.
void PadAndFinish(const Sm3Kernels& k, uint32_t state[8], const uint8_t* tail, size_t tail_len,
                  uint64_t total_len, uint8_t out[kSm3DigestSize]) {
  uint8_t last[2 * kSm3BlockSize] = {};
  if (tail_len > 0) std::memcpy(last, tail, tail_len);
  last[tail_len] = 0x80;  // the bit "1", then k zero bits
  // l + 1 + k ≡ 448 (mod 512): one block if the tail leaves room for the 64-bit length.
  const size_t num_blocks = tail_len < kSm3BlockSize - 8 ? 1 : 2;
  StoreBe64(last + num_blocks * kSm3BlockSize - 8, total_len * 8);  // l in bits, mod 2^64
  k.compress_blocks(state, last, num_blocks);
  for (int i = 0; i < 8; ++i) StoreBe32(out + 4 * i, state[i]);
  SecureZero(last, sizeof(last));
}

}  // namespace

// --- Sm3 --------------------------------------------------------------------------

Sm3::~Sm3() {
  SecureZero(state_, sizeof(state_));
  SecureZero(buffer_, sizeof(buffer_));
}

void Sm3::Reset() {
  std::memcpy(state_, kSm3Iv, sizeof(state_));
  buffer_len_ = 0;
  total_len_ = 0;
}

void Sm3::Update(absl::string_view data) { Update(BytePtr(data.data()), data.size()); }

void Sm3::Update(const uint8_t* data, size_t len) {
  if (len == 0) return;
  const Sm3Kernels& k = Sm3ActiveKernels();
  total_len_ += len;
  if (buffer_len_ > 0) {
    const size_t take = std::min(kSm3BlockSize - buffer_len_, len);
    std::memcpy(buffer_ + buffer_len_, data, take);
    buffer_len_ += take;
    data += take;
    len -= take;
    if (buffer_len_ < kSm3BlockSize) return;
    k.compress_blocks(state_, buffer_, 1);
    buffer_len_ = 0;
  }
  const size_t num_blocks = len / kSm3BlockSize;
  if (num_blocks > 0) {
    k.compress_blocks(state_, data, num_blocks);
    data += num_blocks * kSm3BlockSize;
    len -= num_blocks * kSm3BlockSize;
  }
  if (len > 0) {
    std::memcpy(buffer_, data, len);
    buffer_len_ = len;
  }
}

void Sm3::FinishTo(uint8_t out[kSm3DigestSize]) {
  PadAndFinish(Sm3ActiveKernels(), state_, buffer_, buffer_len_, total_len_, out);
  SecureZero(buffer_, sizeof(buffer_));
  Reset();
}

std::string Sm3::Finish() {
  std::string out(kSm3DigestSize, '\0');
  FinishTo(BytePtr(out.data()));
  return out;
}

// --- One-shot and batch -----------------------------------------------------------

void Sm3DigestWithKernel(const Sm3Kernels& kernels, absl::string_view data,
                         uint8_t out[kSm3DigestSize]) {
  uint32_t state[8];
  std::memcpy(state, kSm3Iv, sizeof(state));
  const uint8_t* p = BytePtr(data.data());
  const size_t num_blocks = data.size() / kSm3BlockSize;
  kernels.compress_blocks(state, p, num_blocks);
  const size_t done = num_blocks * kSm3BlockSize;
  PadAndFinish(kernels, state, p + done, data.size() - done, data.size(), out);
  SecureZero(state, sizeof(state));
}

std::array<uint8_t, kSm3DigestSize> Sm3Digest(absl::string_view data) {
  std::array<uint8_t, kSm3DigestSize> out;
  Sm3DigestWithKernel(Sm3ActiveKernels(), data, out.data());
  return out;
}

void Sm3Batch(absl::Span<const absl::string_view> messages, uint8_t* out) {
  if (messages.empty()) return;
  const Sm3Kernels& k = Sm3ActiveKernels();
  if (k.batch != nullptr) {
    k.batch(messages.data(), messages.size(), out);
    return;
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    Sm3DigestWithKernel(k, messages[i], out + kSm3DigestSize * i);
  }
}

// --- HMAC-SM3 ---------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<HmacSm3>> HmacSm3::New(absl::string_view key) {
  if (key.empty()) {
    return absl::InvalidArgumentError(
        "HMAC-SM3 key: expected at least 1 byte, got 0");
  }
  // RFC 2104 §2: K0 is the key hashed if longer than B = 64 bytes, then zero-padded to B.
  uint8_t k0[kSm3BlockSize] = {};
  if (key.size() > kSm3BlockSize) {
    Sm3DigestWithKernel(Sm3ActiveKernels(), key, k0);
  } else {
    std::memcpy(k0, key.data(), key.size());
  }
  uint8_t pad[kSm3BlockSize];
  std::unique_ptr<HmacSm3> mac(new HmacSm3());
  for (size_t i = 0; i < kSm3BlockSize; ++i) pad[i] = k0[i] ^ 0x36;  // ipad
  mac->inner_.Update(pad, kSm3BlockSize);
  for (size_t i = 0; i < kSm3BlockSize; ++i) pad[i] = k0[i] ^ 0x5c;  // opad
  mac->outer_.Update(pad, kSm3BlockSize);
  SecureZero(k0, sizeof(k0));
  SecureZero(pad, sizeof(pad));
  return mac;
}

// inner_ and outer_ wipe their midstates in Sm3's destructor.
HmacSm3::~HmacSm3() = default;

absl::StatusOr<std::string> HmacSm3::ComputeMac(absl::string_view data) const {
  Sm3 inner = inner_;
  inner.Update(data);
  uint8_t inner_digest[kSm3DigestSize];
  inner.FinishTo(inner_digest);
  Sm3 outer = outer_;
  outer.Update(inner_digest, kSm3DigestSize);
  std::string mac(kSm3DigestSize, '\0');
  outer.FinishTo(BytePtr(mac.data()));
  SecureZero(inner_digest, sizeof(inner_digest));
  return mac;
}

absl::Status HmacSm3::VerifyMac(absl::string_view mac, absl::string_view data) const {
  if (mac.size() != kSm3DigestSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "MAC verification failed: expected a %d-byte MAC, got %d bytes", kSm3DigestSize,
        mac.size()));
  }
  absl::StatusOr<std::string> expected = ComputeMac(data);
  if (!expected.ok()) return expected.status();
  const bool equal = CtMemEq(expected->data(), mac.data(), kSm3DigestSize);
  SecureZero(expected->data(), expected->size());
  if (!equal) return absl::InvalidArgumentError("MAC verification failed");
  return absl::OkStatus();
}

}  // namespace smcrypt
