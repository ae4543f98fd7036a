// sm4_cfb_ofb.cc — SM4-CFB-128 and SM4-OFB (GB/T 17964-2021; NIST SP 800-38A §6.3 with
// s = 128, §6.4), any length without padding, over the active back end's kernels. CFB
// encryption and the OFB keystream are serial and run on the back end's single-block
// path (its CBC encryption entry, a chunk per call); CFB decryption encrypts the previous
// ciphertext blocks kSm4ModeChunkBlocks at a time on the widest ECB path.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "crypto/common/bytes.h"
#include "crypto/common/status_macros.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm4.h"

namespace smcrypt {
namespace {

constexpr uint8_t kZeroBlocks[kSm4ModeChunkBlocks * kSm4BlockSize] = {};

// XorBytes sets out[i] = a[i] ⊕ b[i] for i < len; `out` may equal `a`.
inline void XorBytes(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t len) {
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    x ^= y;
    std::memcpy(out + i, &x, 8);
  }
  for (; i < len; ++i) out[i] = a[i] ^ b[i];
}

}  // namespace

void Sm4CfbEncrypt(const Sm4Kernels& k, const uint32_t rk[32], uint8_t iv[16],
                   const uint8_t* in, uint8_t* out, size_t len) {
  // C_i = P_i ⊕ Y_i with Y_i = E(C_{i−1}). Then Y_{i+1} = E(P_i ⊕ Y_i): the keystream
  // after Y_i is the CBC encryption of the plaintext under the chaining value Y_i, so a
  // chunk's keystream comes from one cbc_encrypt_blocks call (serial, as CFB encryption
  // is, but one call per chunk instead of one per block).
  uint8_t ks[(kSm4ModeChunkBlocks + 1) * kSm4BlockSize];  // Y_j, Y_{j+1}, …, Y_{j+n}
  uint8_t y[kSm4BlockSize];                               // the next block's Y
  k.encrypt_blocks(rk, iv, y, 1);  // Y_0 = E(C_{−1}), C_{−1} = iv
  const size_t full = len / kSm4BlockSize;
  for (size_t j = 0; j < full; j += kSm4ModeChunkBlocks) {
    const size_t n = full - j < kSm4ModeChunkBlocks ? full - j : kSm4ModeChunkBlocks;
    const size_t off = j * kSm4BlockSize;
    std::memcpy(ks, y, kSm4BlockSize);
    // ks[1 … n] = Y_{j+1} … Y_{j+n}, and y ← Y_{j+n}. The plaintext is read here, before
    // `out` (which may be `in`) is written below.
    k.cbc_encrypt_blocks(rk, y, in + off, ks + kSm4BlockSize, n);
    XorBytes(in + off, ks, out + off, n * kSm4BlockSize);
  }
  // `iv` is the last whole ciphertext block; a partial final segment is not fed back.
  if (full > 0) std::memcpy(iv, out + (full - 1) * kSm4BlockSize, kSm4BlockSize);
  const size_t rest = len % kSm4BlockSize;
  if (rest != 0) XorBytes(in + full * kSm4BlockSize, y, out + full * kSm4BlockSize, rest);
  SecureZero(ks, sizeof(ks));
  SecureZero(y, sizeof(y));
}

void Sm4CfbDecrypt(const Sm4Kernels& k, const uint32_t rk[32], uint8_t iv[16],
                   const uint8_t* in, uint8_t* out, size_t len) {
  // ks holds C_{j−1} ‖ C_j ‖ … ‖ C_{j+n−2} for the chunk of blocks j … j+n−1, then, in
  // place, their encryptions. The first entry is the saved feedback block, so `out`
  // may overwrite `in` (in-place decryption) as the chunk is finished.
  uint8_t ks[kSm4ModeChunkBlocks * kSm4BlockSize];
  uint8_t fb[kSm4BlockSize];
  std::memcpy(fb, iv, kSm4BlockSize);
  const size_t segments = (len + kSm4BlockSize - 1) / kSm4BlockSize;
  for (size_t j = 0; j < segments; j += kSm4ModeChunkBlocks) {
    const size_t n = segments - j < kSm4ModeChunkBlocks ? segments - j : kSm4ModeChunkBlocks;
    const size_t off = j * kSm4BlockSize;
    const size_t bytes = len - off < n * kSm4BlockSize ? len - off : n * kSm4BlockSize;
    std::memcpy(ks, fb, kSm4BlockSize);
    if (n > 1) std::memcpy(ks + kSm4BlockSize, in + off, (n - 1) * kSm4BlockSize);
    // The chunk's last whole ciphertext block (the next chunk's feedback), read before
    // `out` may overwrite it. A partial final segment is never fed back (the message
    // ends there).
    const size_t whole = bytes / kSm4BlockSize;
    if (whole > 0) std::memcpy(fb, in + off + (whole - 1) * kSm4BlockSize, kSm4BlockSize);
    k.encrypt_blocks(rk, ks, ks, n);
    XorBytes(in + off, ks, out + off, bytes);
  }
  std::memcpy(iv, fb, kSm4BlockSize);
  SecureZero(ks, sizeof(ks));
  SecureZero(fb, sizeof(fb));
}

void Sm4OfbCrypt(const Sm4Kernels& k, const uint32_t rk[32], uint8_t iv[16],
                 const uint8_t* in, uint8_t* out, size_t len) {
  // O_i = E(0 ⊕ O_{i−1}): the CBC encryption of zero blocks, whose chaining value
  // carries O from one call to the next.
  uint8_t ks[kSm4ModeChunkBlocks * kSm4BlockSize];
  uint8_t o[kSm4BlockSize];
  std::memcpy(o, iv, kSm4BlockSize);
  for (size_t off = 0; off < len; off += sizeof(ks)) {
    const size_t bytes = len - off < sizeof(ks) ? len - off : sizeof(ks);
    const size_t n = (bytes + kSm4BlockSize - 1) / kSm4BlockSize;
    if (bytes % kSm4BlockSize != 0) {
      // The final partial block: its O_i is used in part and not carried out.
      uint8_t o_last[kSm4BlockSize];
      std::memcpy(o_last, o, kSm4BlockSize);
      k.cbc_encrypt_blocks(rk, o_last, kZeroBlocks, ks, n);
      if (n > 1) std::memcpy(o, ks + (n - 2) * kSm4BlockSize, kSm4BlockSize);
      SecureZero(o_last, sizeof(o_last));
    } else {
      k.cbc_encrypt_blocks(rk, o, kZeroBlocks, ks, n);
    }
    XorBytes(in + off, ks, out + off, bytes);
  }
  std::memcpy(iv, o, kSm4BlockSize);
  SecureZero(ks, sizeof(ks));
  SecureZero(o, sizeof(o));
}

namespace {

absl::Status CheckIv(const char* mode, absl::string_view iv) {
  if (iv.size() != kSm4BlockSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s IV: expected %d bytes, got %d", mode, kSm4BlockSize, iv.size()));
  }
  return absl::OkStatus();
}

class Sm4CfbCipher final : public Cipher {
 public:
  explicit Sm4CfbCipher(const Sm4Key& key) : key_(key) {}

  absl::StatusOr<std::string> Encrypt(absl::string_view iv,
                                      absl::string_view plaintext) const override {
    SMCRYPT_RETURN_IF_ERROR(CheckIv("SM4-CFB", iv));
    std::string out(plaintext.size(), '\0');
    uint8_t chain[kSm4BlockSize];
    std::memcpy(chain, iv.data(), kSm4BlockSize);
    Sm4CfbEncrypt(Sm4ActiveKernels(), key_.rk_enc, chain, BytePtr(plaintext.data()),
                  BytePtr(out.data()), out.size());
    return out;
  }

  absl::StatusOr<std::string> Decrypt(absl::string_view iv,
                                      absl::string_view ciphertext) const override {
    SMCRYPT_RETURN_IF_ERROR(CheckIv("SM4-CFB", iv));
    std::string out(ciphertext.size(), '\0');
    uint8_t chain[kSm4BlockSize];
    std::memcpy(chain, iv.data(), kSm4BlockSize);
    Sm4CfbDecrypt(Sm4ActiveKernels(), key_.rk_enc, chain, BytePtr(ciphertext.data()),
                  BytePtr(out.data()), out.size());
    return out;
  }

  size_t iv_size() const override { return kSm4BlockSize; }

 private:
  const Sm4Key key_;  // wiped by ~Sm4Key
};

class Sm4OfbCipher final : public Cipher {
 public:
  explicit Sm4OfbCipher(const Sm4Key& key) : key_(key) {}

  absl::StatusOr<std::string> Encrypt(absl::string_view iv,
                                      absl::string_view plaintext) const override {
    SMCRYPT_RETURN_IF_ERROR(CheckIv("SM4-OFB", iv));
    std::string out(plaintext.size(), '\0');
    uint8_t o[kSm4BlockSize];
    std::memcpy(o, iv.data(), kSm4BlockSize);
    Sm4OfbCrypt(Sm4ActiveKernels(), key_.rk_enc, o, BytePtr(plaintext.data()),
                BytePtr(out.data()), out.size());
    SecureZero(o, sizeof(o));
    return out;
  }

  absl::StatusOr<std::string> Decrypt(absl::string_view iv,
                                      absl::string_view ciphertext) const override {
    return Encrypt(iv, ciphertext);  // OFB is its own inverse
  }

  size_t iv_size() const override { return kSm4BlockSize; }

 private:
  const Sm4Key key_;  // wiped by ~Sm4Key
};

}  // namespace

absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Cfb(absl::string_view key) {
  Sm4Key k;
  SMCRYPT_RETURN_IF_ERROR(Sm4ExpandKey(key, &k));
  return std::unique_ptr<Cipher>(new Sm4CfbCipher(k));
}

absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Ofb(absl::string_view key) {
  Sm4Key k;
  SMCRYPT_RETURN_IF_ERROR(Sm4ExpandKey(key, &k));
  return std::unique_ptr<Cipher>(new Sm4OfbCipher(k));
}

}  // namespace smcrypt
