// sm4_gcm.cc — SM4-GCM (NIST SP 800-38D with SM4; RFC 8998 §3.1), an Aead.
//
// Seal: J0 from the nonce (§7.1 step 2), C = GCTR(inc32(J0), P) with the SM4 ctr32
// kernel, S = GHASH(A ‖ 0^v ‖ C ‖ 0^u ‖ [len(A)]64 ‖ [len(C)]64), T = MSB_t(E(K, J0) ⊕ S).
// Open recomputes T over the received ciphertext, compares it with CtMemEq and wipes
// the plaintext it decrypted when the tags differ. When the SM4 back end has a fused
// GCM entry for this object's GHASH back end (gfni_avx512 with vpclmulqdq_avx512), the
// 64-block multiples go through it (GHASH interleaved with the cipher, data touched
// once); otherwise, and for the rest, encryption and hashing run over the message in
// 4 KiB chunks so the data is still in cache for the second pass.
//
// Constant time: SM4 and GHASH back ends are; lengths (public) are the only values that
// steer branches and loop counts.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/common/readable_count.h"
#include "crypto/common/status_macros.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm4/ghash.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm4.h"

namespace smcrypt {

namespace internal {

namespace {
std::atomic<const GhashKernels*> g_ghash_override{nullptr};
}  // namespace

absl::Span<const GhashKernels* const> GhashAllKernelsForTesting() {
  static const GhashKernels* const* const all = [] {
    const absl::Span<const BackendChoice<GhashKernels>> table = GhashDispatchTable();
    auto* v = new const GhashKernels*[table.size()];
    for (size_t i = 0; i < table.size(); ++i) v[i] = table[i].kernels;
    return v;
  }();
  return absl::Span<const GhashKernels* const>(all, GhashDispatchTable().size());
}

absl::Span<const BackendChoice<GhashKernels>> GhashDispatchTableForTesting() {
  return GhashDispatchTable();
}

const GhashKernels& GhashActiveKernels() {
  const GhashKernels* o = g_ghash_override.load(std::memory_order_relaxed);
  if (o != nullptr) return *o;
  static const GhashKernels* const chosen = [] {
    const absl::Span<const BackendChoice<GhashKernels>> table = GhashDispatchTable();
    const GhashKernels* k =
        FirstCapable(table.data(), table.size(), GetCpuFeatures(), GetCpuIdentity());
    return k != nullptr ? k : &kGhashGeneric;
  }();
  return *chosen;
}

void GhashSetKernelsForTesting(const GhashKernels* k) {
  g_ghash_override.store(k, std::memory_order_relaxed);
}

}  // namespace internal

namespace {

using internal::GhashKernels;
using internal::GhashKey;

constexpr size_t kGcmMinTagSize = 12;
constexpr size_t kGcmMaxTagSize = 16;
constexpr size_t kGcmNonceSize = 12;  // recommended; J0 = IV ‖ 0^31 ‖ 1
// SP 800-38D §5.2.1.1: len(P) ≤ 2^39 − 256 bits, len(A) and len(IV) ≤ 2^64 − 1 bits.
constexpr uint64_t kGcmMaxPlaintextSize = (uint64_t{1} << 36) - 32;
constexpr uint64_t kGcmMaxAadSize = (uint64_t{1} << 61) - 1;
constexpr uint64_t kGcmMaxNonceSize = (uint64_t{1} << 61) - 1;
// Blocks per encrypt-then-hash pass (4 KiB stays in L1).
constexpr size_t kChunkBlocks = 256;

// Inc32 adds `n` to the last 32 bits of `block`, modulo 2^32 (§6.2).
void Inc32(uint8_t block[kSm4BlockSize], uint64_t n) {
  StoreBe32(block + 12, LoadBe32(block + 12) + static_cast<uint32_t>(n));
}

class Sm4Gcm final : public Aead {
 public:
  static absl::StatusOr<std::unique_ptr<Aead>> New(absl::string_view key, size_t tag_size) {
    if (key.size() != kSm4KeySize) {
      return absl::InvalidArgumentError(absl::StrCat("SM4-GCM key size must be ", kSm4KeySize,
                                                     " bytes, got ", key.size()));
    }
    if (tag_size < kGcmMinTagSize || tag_size > kGcmMaxTagSize) {
      return absl::InvalidArgumentError(absl::StrCat("SM4-GCM tag size must be ",
                                                     kGcmMinTagSize, " to ", kGcmMaxTagSize,
                                                     " bytes, got ", tag_size));
    }
    std::unique_ptr<Sm4Gcm> gcm(new Sm4Gcm(tag_size));
    SMCRYPT_RETURN_IF_ERROR(Sm4ExpandKey(key, &gcm->key_));
    // H = E(K, 0^128) (§6.4).
    uint8_t h[kSm4BlockSize] = {};
    Sm4EncryptBlocks(gcm->key_, h, h, 1);
    gcm->ghash_.init(&gcm->ghash_key_, h);
    SecureZero(h, sizeof(h));
    return std::unique_ptr<Aead>(std::move(gcm));
  }

  absl::StatusOr<std::string> Seal(absl::string_view nonce, absl::string_view plaintext,
                                   absl::string_view aad) const override {
    SMCRYPT_RETURN_IF_ERROR(CheckNonceAndAad(nonce, aad));
    if (plaintext.size() > kGcmMaxPlaintextSize) {
      return absl::InvalidArgumentError(absl::StrCat("SM4-GCM plaintext too long: at most ",
                                                     ReadableCount(kGcmMaxPlaintextSize),
                                                     " bytes, got ", plaintext.size()));
    }
    std::string out(plaintext.size() + tag_size_, '\0');
    uint8_t* ct = BytePtr(out.data());
    uint8_t j0[kSm4BlockSize];
    ComputeJ0(nonce, j0);
    uint8_t y[kSm4BlockSize] = {};
    HashPadded(y, BytePtr(aad.data()), aad.size());
    Crypt(j0, y, BytePtr(plaintext.data()), ct, plaintext.size(), /*encrypt=*/true);
    Finish(j0, y, aad.size(), plaintext.size(), ct + plaintext.size());
    return out;
  }

  absl::StatusOr<std::string> Open(absl::string_view nonce, absl::string_view ciphertext_and_tag,
                                   absl::string_view aad) const override {
    if (ciphertext_and_tag.size() < tag_size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("ciphertext too short: expected at least ", tag_size_,
                       " bytes (the tag), got ", ciphertext_and_tag.size()));
    }
    const size_t ct_size = ciphertext_and_tag.size() - tag_size_;
    return OpenDetached(nonce, ciphertext_and_tag.substr(0, ct_size),
                        ciphertext_and_tag.substr(ct_size), aad);
  }

  absl::StatusOr<std::string> OpenDetached(absl::string_view nonce, absl::string_view ciphertext,
                                           absl::string_view tag,
                                           absl::string_view aad) const override {
    if (tag.size() != tag_size_) {
      return absl::InvalidArgumentError(absl::StrCat("SM4-GCM tag must be ", tag_size_,
                                                     " bytes, got ", tag.size()));
    }
    SMCRYPT_RETURN_IF_ERROR(CheckNonceAndAad(nonce, aad));
    const size_t ct_size = ciphertext.size();
    if (ct_size > kGcmMaxPlaintextSize) {
      return absl::InvalidArgumentError(
          absl::StrCat("SM4-GCM ciphertext too long: at most ",
                       ReadableCount(kGcmMaxPlaintextSize + tag_size_), " bytes, got ",
                       ct_size + tag_size_));
    }
    const uint8_t* ct = BytePtr(ciphertext.data());
    std::string out(ct_size, '\0');
    uint8_t j0[kSm4BlockSize];
    ComputeJ0(nonce, j0);
    uint8_t y[kSm4BlockSize] = {};
    HashPadded(y, BytePtr(aad.data()), aad.size());
    Crypt(j0, y, ct, BytePtr(out.data()), ct_size, /*encrypt=*/false);
    uint8_t computed[kGcmMaxTagSize];
    Finish(j0, y, aad.size(), ct_size, computed);
    // Public: the verdict is what Open returns (one generic error).
    const bool ok = CtDeclassify(CtMemEq(computed, BytePtr(tag.data()), tag_size_));
    SecureZero(computed, sizeof(computed));
    if (!ok) {
      SecureZero(out.data(), out.size());
      return absl::InvalidArgumentError("decryption failed");
    }
    return out;
  }

  size_t tag_size() const override { return tag_size_; }
  size_t nonce_size() const override { return kGcmNonceSize; }

 private:
  explicit Sm4Gcm(size_t tag_size)
      : ghash_(internal::GhashActiveKernels()), tag_size_(tag_size) {}

  static absl::Status CheckNonceAndAad(absl::string_view nonce, absl::string_view aad) {
    if (nonce.empty() || nonce.size() > kGcmMaxNonceSize) {
      return absl::InvalidArgumentError(
          absl::StrCat("SM4-GCM nonce size must be 1 to ", ReadableCount(kGcmMaxNonceSize),
                       " bytes (12 recommended), got ", nonce.size()));
    }
    if (aad.size() > kGcmMaxAadSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SM4-GCM associated data too long: at most ", ReadableCount(kGcmMaxAadSize),
          " bytes, got ", aad.size()));
    }
    return absl::OkStatus();
  }

  // HashPadded absorbs `len` bytes of `data` into `y`, zero-padding the last block.
  void HashPadded(uint8_t y[kSm4BlockSize], const uint8_t* data, size_t len) const {
    const size_t full = len / kSm4BlockSize;
    ghash_.update(y, ghash_key_, data, full);
    const size_t rest = len % kSm4BlockSize;
    if (rest != 0) {
      uint8_t block[kSm4BlockSize] = {};
      std::memcpy(block, data + full * kSm4BlockSize, rest);
      ghash_.update(y, ghash_key_, block, 1);
      SecureZero(block, sizeof(block));
    }
  }

  // ComputeJ0 derives the pre-counter block from the nonce (§7.1 step 2).
  void ComputeJ0(absl::string_view nonce, uint8_t j0[kSm4BlockSize]) const {
    if (nonce.size() == kGcmNonceSize) {
      std::memcpy(j0, nonce.data(), kGcmNonceSize);
      StoreBe32(j0 + 12, 1);
      return;
    }
    // J0 = GHASH(IV ‖ 0^(s+64) ‖ [len(IV)]64).
    std::memset(j0, 0, kSm4BlockSize);
    HashPadded(j0, BytePtr(nonce.data()), nonce.size());
    uint8_t len_block[kSm4BlockSize] = {};
    StoreBe64(len_block + 8, static_cast<uint64_t>(nonce.size()) * 8);
    ghash_.update(j0, ghash_key_, len_block, 1);
  }

  // Crypt runs GCTR from inc32(J0) over `len` bytes and absorbs the ciphertext into
  // `y`: after encrypting when `encrypt`, before decrypting otherwise.
  void Crypt(const uint8_t j0[kSm4BlockSize], uint8_t y[kSm4BlockSize], const uint8_t* in,
             uint8_t* out, size_t len, bool encrypt) const {
    uint8_t cb[kSm4BlockSize];
    std::memcpy(cb, j0, kSm4BlockSize);
    Inc32(cb, 1);
    size_t num_blocks = len / kSm4BlockSize;
    const Sm4Kernels& k = Sm4ActiveKernels();
    if (k.gcm_crypt_fused != nullptr && k.gcm_fused_ghash == &ghash_) {
      const size_t done =
          k.gcm_crypt_fused(key_.rk_enc, ghash_key_, cb, y, in, out, num_blocks, encrypt);
      in += done * kSm4BlockSize;
      out += done * kSm4BlockSize;
      num_blocks -= done;
    }
    while (num_blocks > 0) {
      const size_t n = std::min(num_blocks, kChunkBlocks);
      if (!encrypt) ghash_.update(y, ghash_key_, in, n);
      Sm4Ctr32EncryptBlocks(key_, cb, in, out, n);
      if (encrypt) ghash_.update(y, ghash_key_, out, n);
      Inc32(cb, n);
      in += n * kSm4BlockSize;
      out += n * kSm4BlockSize;
      num_blocks -= n;
    }
    const size_t rest = len % kSm4BlockSize;
    if (rest != 0) {
      uint8_t block[kSm4BlockSize] = {};
      std::memcpy(block, in, rest);
      if (!encrypt) ghash_.update(y, ghash_key_, block, 1);
      Sm4Ctr32EncryptBlocks(key_, cb, block, block, 1);
      std::memcpy(out, block, rest);
      if (encrypt) {
        std::memset(block + rest, 0, kSm4BlockSize - rest);
        ghash_.update(y, ghash_key_, block, 1);
      }
      SecureZero(block, sizeof(block));
    }
    SecureZero(cb, sizeof(cb));
  }

  // Finish absorbs the length block and writes tag_size_ bytes of E(K, J0) ⊕ S to `tag`.
  void Finish(uint8_t j0[kSm4BlockSize], uint8_t y[kSm4BlockSize], uint64_t aad_len,
              uint64_t ct_len, uint8_t* tag) const {
    uint8_t len_block[kSm4BlockSize];
    StoreBe64(len_block, aad_len * 8);
    StoreBe64(len_block + 8, ct_len * 8);
    ghash_.update(y, ghash_key_, len_block, 1);
    Sm4EncryptBlocks(key_, j0, j0, 1);
    for (size_t i = 0; i < tag_size_; ++i) tag[i] = j0[i] ^ y[i];
    SecureZero(j0, kSm4BlockSize);
    SecureZero(y, kSm4BlockSize);
  }

  Sm4Key key_;
  GhashKey ghash_key_;
  const GhashKernels& ghash_;
  const size_t tag_size_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Aead>> NewSm4Gcm(absl::string_view key, size_t tag_size) {
  return Sm4Gcm::New(key, tag_size);
}

}  // namespace smcrypt
