// sm3.cc — SM3 (GB/T 32905-2016): padding and iteration (§5.2, §5.3), the incremental
// and one-shot APIs, Sm3Batch, and HMAC-SM3 (RFC 2104). The compression function comes
// from the back end that dispatch chose (sm3_dispatch.cc).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
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

// kShortMessage: below this many bytes, a message and its padding are copied into one
// buffer and compressed in a single back-end call (at most three blocks), since a call's
// fixed cost (loading and storing the chaining value, starting the expansion, wiping the
// expanded words) is a noticeable part of a block's time.
constexpr size_t kShortMessage = 2 * kSm3BlockSize;

// HashTail absorbs the `len` bytes at `data` into `state`, pads for a message of
// `total_len` bytes in all (§5.2) and writes the digest to `out`.
void HashTail(const Sm3Kernels& k, uint32_t state[8], const uint8_t* data, size_t len,
              uint64_t total_len, uint8_t out[kSm3DigestSize]) {
  if (len < kShortMessage) {
    uint8_t buf[kShortMessage + kSm3BlockSize];
    if (len > 0) std::memcpy(buf, data, len);
    // One or two blocks beyond the data: "1", zeros, then the 64-bit length l.
    const size_t num_blocks = (len + 8) / kSm3BlockSize + 1;
    std::memset(buf + len, 0, num_blocks * kSm3BlockSize - len);
    buf[len] = 0x80;
    StoreBe64(buf + num_blocks * kSm3BlockSize - 8, total_len * 8);
    k.compress_blocks(state, buf, num_blocks);
    for (int i = 0; i < 8; ++i) StoreBe32(out + 4 * i, state[i]);
    SecureZero(buf, num_blocks * kSm3BlockSize);
    return;
  }
  const size_t num_blocks = len / kSm3BlockSize;
  k.compress_blocks(state, data, num_blocks);
  const size_t done = num_blocks * kSm3BlockSize;
  PadAndFinish(k, state, data + done, len - done, total_len, out);
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
  HashTail(kernels, state, BytePtr(data.data()), data.size(), data.size(), out);
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
  if (k.batch != nullptr && messages.size() > 1) {
    k.batch(messages.data(), messages.size(), out);
    return;
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    Sm3DigestWithKernel(k, messages[i], out + kSm3DigestSize * i);
  }
}

// --- Jobs, lanes and the KDF ------------------------------------------------------

void Sm3HashJobsSerial(const Sm3Kernels& kernels, const Sm3Job* jobs, size_t num_jobs) {
  for (size_t i = 0; i < num_jobs; ++i) {
    const Sm3Job& job = jobs[i];
    uint32_t state[8];
    std::memcpy(state, job.state, sizeof(state));
    HashTail(kernels, state, job.data, job.len, job.prefix_len + job.len, job.out);
    SecureZero(state, sizeof(state));
  }
}

void Sm3HashJobs(const Sm3Job* jobs, size_t num_jobs) {
  const Sm3Kernels& k = Sm3ActiveKernels();
  if (k.hash_jobs != nullptr && num_jobs > 1) {
    k.hash_jobs(jobs, num_jobs);
  } else {
    Sm3HashJobsSerial(k, jobs, num_jobs);
  }
}

void Sm3BatchWithHashJobs(void (*hash_jobs)(const Sm3Job*, size_t),
                          const absl::string_view* messages, size_t num_messages, uint8_t* out) {
  constexpr size_t kChunk = 128;  // jobs per hand-over; lanes drain only at chunk ends
  Sm3Job jobs[kChunk];
  for (size_t first = 0; first < num_messages; first += kChunk) {
    const size_t n = std::min(kChunk, num_messages - first);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(jobs[i].state, kSm3Iv, sizeof(kSm3Iv));
      jobs[i].data = BytePtr(messages[first + i].data());
      jobs[i].len = messages[first + i].size();
      jobs[i].prefix_len = 0;
      jobs[i].out = out + kSm3DigestSize * (first + i);
    }
    hash_jobs(jobs, n);
  }
}

void Sm3RunLanes(size_t lanes, Sm3CompressLanesFn compress_lanes, const Sm3Job* jobs,
                 size_t num_jobs) {
  constexpr size_t kMaxLanes = 16;
  if (lanes == 0 || lanes > kMaxLanes) std::abort();  // a back-end table error
  alignas(64) uint32_t st[8 * kMaxLanes];
  alignas(64) uint8_t pad[kMaxLanes][2 * kSm3BlockSize];
  const uint8_t* ptr[kMaxLanes];
  size_t left[kMaxLanes];        // blocks left in the lane's current segment
  size_t pad_blocks[kMaxLanes];  // 1 or 2: the lane's padding segment
  bool in_pad[kMaxLanes];
  const Sm3Job* job[kMaxLanes];  // null: idle
  size_t next = 0;
  size_t active = 0;

  auto assign = [&](size_t i) {
    if (next == num_jobs) {
      job[i] = nullptr;
      return;
    }
    const Sm3Job& jb = jobs[next++];
    job[i] = &jb;
    ++active;
    for (size_t w = 0; w < 8; ++w) st[w * lanes + i] = jb.state[w];
    const size_t num_full = jb.len / kSm3BlockSize;
    const size_t tail = jb.len - num_full * kSm3BlockSize;
    std::memset(pad[i], 0, sizeof(pad[i]));
    if (tail > 0) std::memcpy(pad[i], jb.data + num_full * kSm3BlockSize, tail);
    pad[i][tail] = 0x80;
    pad_blocks[i] = tail < kSm3BlockSize - 8 ? 1 : 2;
    StoreBe64(pad[i] + pad_blocks[i] * kSm3BlockSize - 8, (jb.prefix_len + jb.len) * 8);
    if (num_full > 0) {
      ptr[i] = jb.data;
      left[i] = num_full;
      in_pad[i] = false;
    } else {
      ptr[i] = pad[i];
      left[i] = pad_blocks[i];
      in_pad[i] = true;
    }
  };
  auto finish = [&](size_t i) {
    for (size_t w = 0; w < 8; ++w) StoreBe32(job[i]->out + 4 * w, st[w * lanes + i]);
    --active;
  };

  for (size_t i = 0; i < lanes; ++i) assign(i);
  const size_t serial_below = std::max<size_t>(1, lanes / 8);
  while (active > 0) {
    if (next == num_jobs && active <= serial_below) {
      // The few lanes still busy finish one at a time on the single-stream back end.
      for (size_t i = 0; i < lanes; ++i) {
        if (job[i] == nullptr) continue;
        uint32_t state[8];
        for (size_t w = 0; w < 8; ++w) state[w] = st[w * lanes + i];
        Sm3DispatchedCompressBlocks(state, ptr[i], left[i]);
        if (!in_pad[i]) Sm3DispatchedCompressBlocks(state, pad[i], pad_blocks[i]);
        for (size_t w = 0; w < 8; ++w) st[w * lanes + i] = state[w];
        SecureZero(state, sizeof(state));
        finish(i);
        job[i] = nullptr;
      }
      break;
    }
    size_t m = SIZE_MAX;
    const uint8_t* busy = nullptr;
    for (size_t i = 0; i < lanes; ++i) {
      if (job[i] == nullptr) continue;
      m = std::min(m, left[i]);
      busy = ptr[i];
    }
    // Idle lanes repeat a busy lane's input (which has at least m blocks left); their
    // results are never read.
    for (size_t i = 0; i < lanes; ++i) {
      if (job[i] == nullptr) ptr[i] = busy;
    }
    compress_lanes(st, ptr, m);
    for (size_t i = 0; i < lanes; ++i) {
      if (job[i] == nullptr) continue;
      ptr[i] += m * kSm3BlockSize;
      left[i] -= m;
      if (left[i] > 0) continue;
      if (!in_pad[i]) {
        ptr[i] = pad[i];
        left[i] = pad_blocks[i];
        in_pad[i] = true;
        continue;
      }
      finish(i);
      assign(i);
    }
  }
  SecureZero(st, sizeof(st));
  SecureZero(pad, sizeof(pad));
}

uint64_t Sm3Kdf(const uint8_t* z, size_t z_len, const uint8_t* in, uint8_t* out,
                size_t out_len) {
  if (out_len == 0) return 0;
  const Sm3Kernels& k = Sm3ActiveKernels();
  // Z's complete blocks are shared by every Hv_i: compress them once.
  uint32_t mid[8];
  std::memcpy(mid, kSm3Iv, sizeof(mid));
  const size_t z_full = z_len / kSm3BlockSize;
  k.compress_blocks(mid, z, z_full);
  const uint8_t* z_tail = z + z_full * kSm3BlockSize;
  const size_t z_tail_len = z_len - z_full * kSm3BlockSize;
  const size_t msg_len = z_tail_len + 4;  // Z's tail ‖ ct

  constexpr size_t kChunk = 64;  // counters per hand-over to the lanes
  alignas(64) uint8_t msgs[kChunk][kSm3BlockSize + 4];
  alignas(64) uint8_t t[kChunk * kSm3DigestSize];
  Sm3Job jobs[kChunk];
  for (size_t i = 0; i < kChunk; ++i) {
    if (z_tail_len > 0) std::memcpy(msgs[i], z_tail, z_tail_len);
    std::memcpy(jobs[i].state, mid, sizeof(mid));
    jobs[i].data = msgs[i];
    jobs[i].len = msg_len;
    jobs[i].prefix_len = z_full * kSm3BlockSize;
    jobs[i].out = t + kSm3DigestSize * i;
  }
  const size_t num_hv = (out_len + kSm3DigestSize - 1) / kSm3DigestSize;
  uint8_t acc = 0;
  uint32_t ct = 1;  // §5.4.3: ct starts at 0x00000001
  for (size_t first = 0; first < num_hv; first += kChunk) {
    const size_t n = std::min(kChunk, num_hv - first);
    for (size_t i = 0; i < n; ++i) StoreBe32(msgs[i] + z_tail_len, ct++);
    Sm3HashJobs(jobs, n);
    const size_t off = first * kSm3DigestSize;
    const size_t len = std::min(n * kSm3DigestSize, out_len - off);
    for (size_t i = 0; i < len; ++i) {
      acc |= t[i];
      out[off + i] = (in != nullptr ? in[off + i] : 0) ^ t[i];
    }
  }
  SecureZero(mid, sizeof(mid));
  SecureZero(msgs, sizeof(msgs));
  SecureZero(t, sizeof(t));
  for (Sm3Job& j : jobs) SecureZero(j.state, sizeof(j.state));
  return 0 - static_cast<uint64_t>(CtIsZero32(acc) & 1);
}

// --- HMAC-SM3 ---------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<HmacSm3>> HmacSm3::New(absl::string_view key) {
  const Sm3Kernels& k = Sm3ActiveKernels();
  // RFC 2104 §2: K0 is the key hashed if longer than B = 64 bytes, then zero-padded to B
  // (the empty key gives B zero bytes).
  uint8_t k0[kSm3BlockSize] = {};
  if (key.size() > kSm3BlockSize) {
    Sm3DigestWithKernel(k, key, k0);
  } else if (!key.empty()) {
    std::memcpy(k0, key.data(), key.size());
  }
  uint8_t pad[kSm3BlockSize];
  std::unique_ptr<HmacSm3> mac(new HmacSm3());
  for (size_t i = 0; i < kSm3BlockSize; ++i) pad[i] = k0[i] ^ 0x36;  // ipad
  std::memcpy(mac->inner_, kSm3Iv, sizeof(kSm3Iv));
  k.compress_blocks(mac->inner_, pad, 1);
  for (size_t i = 0; i < kSm3BlockSize; ++i) pad[i] = k0[i] ^ 0x5c;  // opad
  std::memcpy(mac->outer_, kSm3Iv, sizeof(kSm3Iv));
  k.compress_blocks(mac->outer_, pad, 1);
  SecureZero(k0, sizeof(k0));
  SecureZero(pad, sizeof(pad));
  return mac;
}

HmacSm3::~HmacSm3() {
  SecureZero(inner_, sizeof(inner_));
  SecureZero(outer_, sizeof(outer_));
}

void HmacSm3::ComputeMacTo(absl::string_view data, uint8_t out[kSm3DigestSize]) const {
  const Sm3Kernels& k = Sm3ActiveKernels();
  // Inner hash: from the ipad midstate, over data, padded for 64 + |data| bytes.
  uint32_t state[8];
  std::memcpy(state, inner_, sizeof(state));
  uint8_t inner_digest[kSm3DigestSize];
  HashTail(k, state, BytePtr(data.data()), data.size(), kSm3BlockSize + data.size(),
           inner_digest);
  // Outer hash: from the opad midstate over the 32-byte inner digest (one block).
  std::memcpy(state, outer_, sizeof(state));
  PadAndFinish(k, state, inner_digest, kSm3DigestSize, kSm3BlockSize + kSm3DigestSize, out);
  SecureZero(state, sizeof(state));
  SecureZero(inner_digest, sizeof(inner_digest));
}

absl::StatusOr<std::string> HmacSm3::ComputeMac(absl::string_view data) const {
  std::string mac(kSm3DigestSize, '\0');
  ComputeMacTo(data, BytePtr(mac.data()));
  return mac;
}

namespace internal {

void HmacSm3Batch(const HmacSm3* const* keys, const absl::string_view* messages,
                  size_t num_messages, uint8_t* out) {
  constexpr size_t kChunk = 64;
  Sm3Job jobs[kChunk];
  alignas(64) uint8_t inner[kChunk * kSm3DigestSize];
  for (size_t first = 0; first < num_messages; first += kChunk) {
    const size_t n = std::min(kChunk, num_messages - first);
    for (size_t i = 0; i < n; ++i) {  // inner hashes, in lanes
      std::memcpy(jobs[i].state, keys[first + i]->inner_, sizeof(jobs[i].state));
      jobs[i].data = BytePtr(messages[first + i].data());
      jobs[i].len = messages[first + i].size();
      jobs[i].prefix_len = kSm3BlockSize;
      jobs[i].out = inner + kSm3DigestSize * i;
    }
    Sm3HashJobs(jobs, n);
    for (size_t i = 0; i < n; ++i) {  // outer hashes, in lanes
      std::memcpy(jobs[i].state, keys[first + i]->outer_, sizeof(jobs[i].state));
      jobs[i].data = inner + kSm3DigestSize * i;
      jobs[i].len = kSm3DigestSize;
      jobs[i].out = out + kSm3DigestSize * (first + i);
    }
    Sm3HashJobs(jobs, n);
  }
  for (Sm3Job& j : jobs) SecureZero(j.state, sizeof(j.state));
  SecureZero(inner, sizeof(inner));
}

}  // namespace internal

absl::Status HmacSm3::VerifyMac(absl::string_view mac, absl::string_view data) const {
  if (mac.size() != kSm3DigestSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "MAC verification failed: expected a %d-byte MAC, got %d bytes", kSm3DigestSize,
        mac.size()));
  }
  uint8_t expected[kSm3DigestSize];
  ComputeMacTo(data, expected);
  // Public: the verdict is what VerifyMac returns.
  const bool equal = CtDeclassify(CtMemEq(expected, mac.data(), kSm3DigestSize));
  SecureZero(expected, sizeof(expected));
  if (!equal) return absl::InvalidArgumentError("MAC verification failed");
  return absl::OkStatus();
}

}  // namespace smcrypt
