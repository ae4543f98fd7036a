// sm4.cc — SM4 key schedule (GB/T 32907-2016 §7.3) and the block API over the back end
// that dispatch chose (sm4_dispatch.cc).
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "crypto/common/bytes.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm4.h"

namespace smcrypt {
namespace {

// The system parameter FK (§7.3).
constexpr uint32_t kFk[4] = {0xa3b1bac6, 0x56aa3350, 0x677d9197, 0xb27022dc};

// CK_i (§7.3): byte j of CK_i is ck_{i,j} = (4i + j) × 7 mod 256.
constexpr uint32_t Ck(int i) {
  uint32_t w = 0;
  for (int j = 0; j < 4; ++j) w = (w << 8) | (((4 * i + j) * 7) & 0xff);
  return w;
}

// L' of the key schedule (§7.3).
inline uint32_t LPrime(uint32_t b) { return b ^ Rotl32(b, 13) ^ Rotl32(b, 23); }

void ExpandKeyUnchecked(const uint8_t key[kSm4KeySize], Sm4Key* out) {
  uint32_t k[4];
  for (int i = 0; i < 4; ++i) k[i] = LoadBe32(key + 4 * i) ^ kFk[i];
  // rk_i = K_{i+4} = K_i ⊕ T'(K_{i+1} ⊕ K_{i+2} ⊕ K_{i+3} ⊕ CK_i), T' = L'∘τ.
  for (int i = 0; i < kSm4Rounds; ++i) {
    const uint32_t t = k[(i + 1) % 4] ^ k[(i + 2) % 4] ^ k[(i + 3) % 4] ^ Ck(i);
    k[i % 4] ^= LPrime(Sm4GenericTau(t));
    out->rk_enc[i] = k[i % 4];
    out->rk_dec[kSm4Rounds - 1 - i] = k[i % 4];  // §7.2: decryption uses rk in reverse
  }
  SecureZero(k, sizeof(k));
}

// SelfTest runs GB/T 32907-2016 Appendix A example 1 through the active back end in
// both directions (fail closed, as libgcrypt's sm4_selftest does).
bool SelfTest() {
  static const uint8_t kKeyAndPlain[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                           0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  static const uint8_t kCipher[16] = {0x68, 0x1e, 0xdf, 0x34, 0xd2, 0x06, 0x96, 0x5e,
                                      0x86, 0xb3, 0xe9, 0x4f, 0x53, 0x6e, 0x42, 0x46};
  Sm4Key key;
  ExpandKeyUnchecked(kKeyAndPlain, &key);
  uint8_t buf[16];
  Sm4EncryptBlocks(key, kKeyAndPlain, buf, 1);
  bool ok = std::memcmp(buf, kCipher, 16) == 0;
  Sm4DecryptBlocks(key, buf, buf, 1);
  ok = ok && std::memcmp(buf, kKeyAndPlain, 16) == 0;
  return ok;
}

}  // namespace

Sm4Key::~Sm4Key() {
  SecureZero(rk_enc, sizeof(rk_enc));
  SecureZero(rk_dec, sizeof(rk_dec));
}

absl::Status Sm4ExpandKey(absl::string_view key, Sm4Key* out) {
  if (key.size() != kSm4KeySize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SM4 key: expected %d bytes, got %d", kSm4KeySize, key.size()));
  }
  static const bool self_test_ok = SelfTest();
  if (!self_test_ok) {
    return absl::InternalError(absl::StrFormat("SM4 self-test failed on back end %s",
                                               Sm4ActiveKernels().name));
  }
  ExpandKeyUnchecked(BytePtr(key.data()), out);
  return absl::OkStatus();
}

void Sm4EncryptBlocks(const Sm4Key& key, const uint8_t* in, uint8_t* out, size_t num_blocks) {
  Sm4ActiveKernels().encrypt_blocks(key.rk_enc, in, out, num_blocks);
}

void Sm4DecryptBlocks(const Sm4Key& key, const uint8_t* in, uint8_t* out, size_t num_blocks) {
  Sm4ActiveKernels().encrypt_blocks(key.rk_dec, in, out, num_blocks);
}

void Sm4Ctr32EncryptBlocks(const Sm4Key& key, const uint8_t counter_block[kSm4BlockSize],
                           const uint8_t* in, uint8_t* out, size_t num_blocks) {
  Sm4ActiveKernels().ctr32_encrypt_blocks(key.rk_enc, counter_block, in, out, num_blocks);
}

}  // namespace smcrypt
