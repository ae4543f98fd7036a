// sm4_xts.cc — SM4-XTS with ciphertext stealing: IEEE Std 1619-2018 (§5, with SM4 as the
// block cipher) and GB/T 17964-2021's XTS, which differ only in the bit order of the
// tweak multiplication by α. The blocks of a data unit are independent given their
// tweaks: the tweaks of kSm4ModeChunkBlocks blocks are computed serially (two 64-bit
// shifts and a mask each), XORed in, and the chunk goes through the back end's widest
// ECB path in one call.
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/common/status_macros.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm4.h"

namespace smcrypt {
namespace {

inline uint64_t LoadLe64(const uint8_t* in) {
  uint64_t v;
  std::memcpy(&v, in, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

inline void StoreLe64(uint8_t* out, uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(out, &v, 8);
}

// XorBlocks sets out = a ⊕ b over `len` bytes (a multiple of 8); `out` may equal `a`.
inline void XorBlocks(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t len) {
  for (size_t i = 0; i < len; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    x ^= y;
    std::memcpy(out + i, &x, 8);
  }
}

// CryptOne sets out = E(rk, in ⊕ t) ⊕ t for one block (D with decryption-order keys).
void CryptOne(const Sm4Kernels& k, const uint32_t rk[32], const uint8_t t[16],
              const uint8_t in[16], uint8_t out[16]) {
  uint8_t x[kSm4BlockSize];
  XorBlocks(in, t, x, kSm4BlockSize);
  k.encrypt_blocks(rk, x, x, 1);
  XorBlocks(x, t, out, kSm4BlockSize);
  SecureZero(x, sizeof(x));
}

// XtsTweaks writes the n tweaks t, t·α, …, t·α^(n−1) of consecutive blocks to `tweaks`
// (16 bytes each) and sets t ← t·α^n, with the 128-bit value held in two 64-bit words
// from one block to the next.
void XtsTweaks(Sm4XtsVariant variant, uint8_t t[16], uint8_t* tweaks, size_t n) {
  if (variant == Sm4XtsVariant::kIeee1619) {
    // IEEE Std 1619-2018 §5.2: t is a0 + a1·x + … + a127·x^127 with a0 the least
    // significant bit of byte 0 (little-endian). ·x is a left shift; x^128 reduces to
    // x^7 + x^2 + x + 1 (0x87) by the modulus x^128 + x^7 + x^2 + x + 1.
    uint64_t lo = LoadLe64(t), hi = LoadLe64(t + 8);
    for (size_t i = 0; i < n; ++i) {
      StoreLe64(tweaks + i * kSm4BlockSize, lo);
      StoreLe64(tweaks + i * kSm4BlockSize + 8, hi);
      const uint64_t carry = 0 - (hi >> 63);
      hi = (hi << 1) | (lo >> 63);
      lo = (lo << 1) ^ (carry & 0x87);
    }
    StoreLe64(t, lo);
    StoreLe64(t + 8, hi);
  } else {
    // GB/T 17964-2021: the same field in GCM's bit order (SP 800-38D §6.3): the most
    // significant bit of byte 0 is x^0 and the least significant bit of byte 15 is
    // x^127. ·x is a right shift of the big-endian 128-bit string; x^128 reduces to
    // 1 + x + x^2 + x^7, which in this order is 0xE1 in byte 0.
    uint64_t hi = LoadBe64(t), lo = LoadBe64(t + 8);
    for (size_t i = 0; i < n; ++i) {
      StoreBe64(tweaks + i * kSm4BlockSize, hi);
      StoreBe64(tweaks + i * kSm4BlockSize + 8, lo);
      const uint64_t carry = 0 - (lo & 1);
      lo = (lo >> 1) | (hi << 63);
      hi = (hi >> 1) ^ (carry & (uint64_t{0xE1} << 56));
    }
    StoreBe64(t, hi);
    StoreBe64(t + 8, lo);
  }
}

}  // namespace

void Sm4XtsMulAlpha(Sm4XtsVariant variant, uint8_t t[16]) {
  uint8_t before[kSm4BlockSize];  // t itself, as the one tweak written
  XtsTweaks(variant, t, before, 1);
  SecureZero(before, sizeof(before));
}

void Sm4XtsCrypt(const Sm4Kernels& k, const uint32_t rk1[32], const uint32_t rk2[32],
                 Sm4XtsVariant variant, const uint8_t iv[16], const uint8_t* in,
                 uint8_t* out, size_t len, bool encrypt) {
  const size_t m = len / kSm4BlockSize;  // whole blocks, ≥ 1
  const size_t r = len % kSm4BlockSize;  // bytes of the partial block, stolen when > 0
  // With stealing, the last whole block is handled with the partial one below.
  const size_t bulk = r == 0 ? m : m - 1;

  uint8_t t[kSm4BlockSize];  // the tweak of the next block
  k.encrypt_blocks(rk2, iv, t, 1);
  uint8_t tweaks[kSm4ModeChunkBlocks * kSm4BlockSize];
  for (size_t j = 0; j < bulk; j += kSm4ModeChunkBlocks) {
    const size_t n = bulk - j < kSm4ModeChunkBlocks ? bulk - j : kSm4ModeChunkBlocks;
    const size_t bytes = n * kSm4BlockSize;
    XtsTweaks(variant, t, tweaks, n);
    uint8_t* o = out + j * kSm4BlockSize;
    XorBlocks(in + j * kSm4BlockSize, tweaks, o, bytes);
    k.encrypt_blocks(rk1, o, o, n);
    XorBlocks(o, tweaks, o, bytes);
  }
  SecureZero(tweaks, sizeof(tweaks));

  if (r != 0) {
    // Ciphertext stealing (IEEE Std 1619-2018 §5.3.2 and §5.4.2). t is T_{m−1}, the
    // tweak of the last whole block; t_m = T_m that of the partial one.
    uint8_t t_m[kSm4BlockSize];
    std::memcpy(t_m, t, kSm4BlockSize);
    Sm4XtsMulAlpha(variant, t_m);
    const uint8_t* last_in = in + (m - 1) * kSm4BlockSize;  // P_{m−1} or C_{m−1}
    uint8_t* last_out = out + (m - 1) * kSm4BlockSize;
    uint8_t head[kSm4BlockSize];  // CC (encryption) or PP (decryption)
    uint8_t tail[kSm4BlockSize];  // the partial input block, completed from head
    // Encryption: CC = E(P_{m−1} ⊕ T_{m−1}); decryption: PP = D(C_{m−1} ⊕ T_m).
    CryptOne(k, rk1, encrypt ? t : t_m, last_in, head);
    // The partial input is read before the output (which may alias it) is written.
    std::memcpy(tail, last_in + kSm4BlockSize, r);
    std::memcpy(tail + r, head + r, kSm4BlockSize - r);
    std::memcpy(last_out + kSm4BlockSize, head, r);  // C_m = CC[0, r) or P_m = PP[0, r)
    // Encryption: C_{m−1} = E(P_m ‖ CC[r, 16) ⊕ T_m); decryption with T_{m−1}.
    CryptOne(k, rk1, encrypt ? t_m : t, tail, last_out);
    SecureZero(head, sizeof(head));
    SecureZero(tail, sizeof(tail));
    SecureZero(t_m, sizeof(t_m));
  }
  SecureZero(t, sizeof(t));
}

namespace {

// XtsName is the algorithm's name in error messages.
const char* XtsName(Sm4XtsVariant variant) {
  return variant == Sm4XtsVariant::kGbT17964 ? "SM4-XTS-GB" : "SM4-XTS";
}

class Sm4XtsCipher final : public Cipher {
 public:
  Sm4XtsCipher(const Sm4Key& key1, const Sm4Key& key2, Sm4XtsVariant variant)
      : key1_(key1), key2_(key2), variant_(variant) {}

  absl::StatusOr<std::string> Encrypt(absl::string_view iv,
                                      absl::string_view plaintext) const override {
    return Crypt(iv, plaintext, true);
  }

  absl::StatusOr<std::string> Decrypt(absl::string_view iv,
                                      absl::string_view ciphertext) const override {
    return Crypt(iv, ciphertext, false);
  }

  size_t iv_size() const override { return kSm4BlockSize; }

 private:
  absl::StatusOr<std::string> Crypt(absl::string_view iv, absl::string_view in,
                                    bool encrypt) const {
    if (iv.size() != kSm4BlockSize) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s IV (tweak): expected %d bytes, got %d", Name(), kSm4BlockSize, iv.size()));
    }
    if (in.size() < kSm4BlockSize || in.size() > kSm4XtsMaxBlocks * kSm4BlockSize) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s data unit: expected 16 to %d bytes, got %d", Name(),
          kSm4XtsMaxBlocks * kSm4BlockSize, in.size()));
    }
    std::string out(in.size(), '\0');
    Sm4XtsCrypt(Sm4ActiveKernels(), encrypt ? key1_.rk_enc : key1_.rk_dec, key2_.rk_enc,
                variant_, BytePtr(iv.data()), BytePtr(in.data()), BytePtr(out.data()),
                out.size(), encrypt);
    return out;
  }

  const char* Name() const { return XtsName(variant_); }

  const Sm4Key key1_;  // K1, the data key; wiped by ~Sm4Key
  const Sm4Key key2_;  // K2, the tweak key
  const Sm4XtsVariant variant_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Xts(absl::string_view key,
                                                  Sm4XtsVariant variant) {
  if (variant != Sm4XtsVariant::kIeee1619 && variant != Sm4XtsVariant::kGbT17964) {
    return absl::InvalidArgumentError("SM4-XTS: unknown variant");
  }
  if (key.size() != kSm4XtsKeySize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s key: expected %d bytes (K1 || K2), got %d", XtsName(variant),
                        kSm4XtsKeySize, key.size()));
  }
  // Public: the verdict is returned to the caller (a key with K1 = K2 is refused).
  const bool halves_equal =
      CtMemEq(key.data(), key.data() + kSm4KeySize, kSm4KeySize);
  if (CtDeclassify(static_cast<uint32_t>(halves_equal)) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s key: K1 and K2 must differ (IEEE Std 1619-2018 §5.1)", XtsName(variant)));
  }
  Sm4Key k1, k2;
  SMCRYPT_RETURN_IF_ERROR(Sm4ExpandKey(key.substr(0, kSm4KeySize), &k1));
  SMCRYPT_RETURN_IF_ERROR(Sm4ExpandKey(key.substr(kSm4KeySize), &k2));
  return std::unique_ptr<Cipher>(new Sm4XtsCipher(k1, k2, variant));
}

}  // namespace smcrypt
